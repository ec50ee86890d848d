// fg_sgemm_host's checks that need no device: which failure of a call's parts the call reports.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <vector>

#include "host/failure.hpp"

using namespace fastgemm::detail;

TEST_CASE("host: a call reports the failure that stopped its other parts, whatever its message", "[host_checks]") {
  const Status aborted = aborted_by_other_failure();
  CHECK(aborted.code == StatusCode::aborted);
  const Status cause = Status::failure(StatusCode::cuda_error, "cudaMemcpy2DAsync: invalid argument", 1);
  // The parts in the order they are read: the cause may come after any number of aborts.
  const Status reported = first_failure({aborted, Status::success(), cause, aborted});
  CHECK(reported.code == StatusCode::cuda_error);
  CHECK(reported.message == cause.message);
  CHECK(reported.cuda_error == 1);
  // A failure worded as an abort is still a cause: only the code tells the two apart.
  const Status same_words = Status::failure(StatusCode::internal_error, aborted.message);
  CHECK(first_failure({aborted, same_words}).code == StatusCode::internal_error);
  // Of two causes, the first in the parts' order.
  const Status second = Status::failure(StatusCode::alloc_failed, "no host thread could be started");
  CHECK(first_failure(std::vector<Status>{aborted, second, cause}).code == StatusCode::alloc_failed);
  // Aborts alone are not a success.
  CHECK(first_failure({aborted, Status::success()}).code == StatusCode::aborted);
  CHECK(first_failure({Status::success(), Status::success()}).ok());
  CHECK(first_failure(std::vector<Status>{}).ok());
}
