/* SPDX-License-Identifier: Apache-2.0 */
/* cublas_user capture and threads: cublasSgemm_v2 calls captured into CUDA graphs, and from several threads. */
#include "cublas_user_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------- */
/* One cublasSgemm_v2 on device buffers of its own, for capture and threads */

typedef struct {
  operands_t ops;
  gemm_t g;
  float *a, *b, *c;                 /* device */
  float *host_a, *host_b, *host_c;  /* staging, in the layout the call reads */
  float *before;                    /* C as it is before the call: poison, or the random C0 where beta != 0 */
  size_t a_count, b_count, c_count; /* elements of the buffers */
} job_t;

static void job_init(job_t *j, int m, int n, int k, cublasOperation_t ta, cublasOperation_t tb, float alpha,
                     float beta) {
  operands_init(&j->ops, m, n, k);
  gemm_t g = {ta, tb, m, n, k, stored_rows(ta, m, k), stored_rows(tb, k, n), m, 0, 0, 0, alpha, beta, NULL, NULL, NULL};
  j->a_count = (size_t)m * k, j->b_count = (size_t)k * n, j->c_count = (size_t)m * n;
  CHECK_CUDA(cudaMalloc((void **)&j->a, sizeof(float) * j->a_count));
  CHECK_CUDA(cudaMalloc((void **)&j->b, sizeof(float) * j->b_count));
  CHECK_CUDA(cudaMalloc((void **)&j->c, sizeof(float) * j->c_count));
  g.a = j->a, g.b = j->b, g.c = j->c;
  j->g = g;
  j->host_a = xmalloc(sizeof(float) * j->a_count);
  j->host_b = xmalloc(sizeof(float) * j->b_count);
  j->host_c = xmalloc(sizeof(float) * j->c_count);
  j->before = xmalloc(sizeof(float) * j->c_count);
}

/* New operands (and C0 where beta != 0) on the handle's stream, with their reference. */
static void job_fill(job_t *j, cublasHandle_t handle, uint64_t seed) {
  cudaStream_t stream;
  CHECK_CUBLAS(cublasGetStream(handle, &stream));
  operands_fill(&j->ops, handle, seed);
  store(j->host_a, j->ops.a, j->g.m, j->g.k, j->g.ta, j->g.lda);
  store(j->host_b, j->ops.b, j->g.k, j->g.n, j->g.tb, j->g.ldb);
  copy_now(j->a, j->host_a, sizeof(float) * j->a_count, cudaMemcpyHostToDevice, stream);
  copy_now(j->b, j->host_b, sizeof(float) * j->b_count, cudaMemcpyHostToDevice, stream);
  if (j->g.beta == 0.0f)
    memset(j->before, POISON_BYTE, sizeof(float) * j->c_count);
  else
    fill_uniform(j->before, j->c_count, seed + 0x5eed);
}

/* C as `before` says, ahead of the call on the stream. */
static void job_reset_c(job_t *j, cudaStream_t stream) {
  copy_now(j->c, j->before, sizeof(float) * j->c_count, cudaMemcpyHostToDevice, stream);
}

static int job_check(job_t *j, cudaStream_t stream, const char *label) {
  copy_now(j->host_c, j->c, sizeof(float) * j->c_count, cudaMemcpyDeviceToHost, stream);
  const operands_t *ops[1] = {&j->ops};
  const verdict_t v = check_product(j->host_c, j->before, j->g.m, j->g.n, j->g.k, j->g.ldc, (long long)j->c_count, 1, 1,
                                    j->g.alpha, j->g.beta, ops, NULL, 0);
  char line[256];
  snprintf(line, sizeof(line), "%s cublasSgemm_v2 %c%c m=%d n=%d k=%d alpha=%g beta=%g", label, op_letter(j->g.ta),
           op_letter(j->g.tb), j->g.m, j->g.n, j->g.k, j->g.alpha, j->g.beta);
  return report(line, &v);
}

static void job_free(job_t *j) {
  CHECK_CUDA(cudaFree(j->a));
  CHECK_CUDA(cudaFree(j->b));
  CHECK_CUDA(cudaFree(j->c));
  free(j->host_a), free(j->host_b), free(j->host_c), free(j->before);
  operands_free(&j->ops);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* capture */

/* Captures job's call on the stream into a graph, ready to launch. */
static cudaGraphExec_t capture(cublasHandle_t handle, cudaStream_t stream, const job_t *j) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  sgemm(handle, &j->g);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return exec;
}

/* A graph holds the call, not its values: each replay must read what A and B hold at launch. */
static int replay(cudaGraphExec_t exec, cublasHandle_t handle, cudaStream_t stream, job_t *j, uint64_t seed,
                  const char *label) {
  job_fill(j, handle, seed);
  job_reset_c(j, stream);
  CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return job_check(j, stream, label);
}

int mode_capture(void) {
  print_device();
  cudaStream_t stream;
  cublasHandle_t handle;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  int failures = 0;

  /* The shape called once eagerly before it is captured. */
  job_t job;
  job_init(&job, 2048, 2048, 4096, CUBLAS_OP_N, CUBLAS_OP_N, 0.75f, 0.0f);
  job_fill(&job, handle, 301);
  job_reset_c(&job, stream);
  sgemm(handle, &job.g);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  failures += job_check(&job, stream, "capture eager");
  cudaGraphExec_t exec = capture(handle, stream, &job);
  failures += replay(exec, handle, stream, &job, 302, "capture replay 1");
  failures += replay(exec, handle, stream, &job, 303, "capture replay 2");
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  job_free(&job);

  /* A shape first seen inside the capture, with beta != 0: C0 is read at launch too. */
  job_t fresh;
  job_init(&fresh, 2560, 2048, 4096, CUBLAS_OP_T, CUBLAS_OP_N, -0.5f, 1.25f);
  exec = capture(handle, stream, &fresh);
  failures += replay(exec, handle, stream, &fresh, 312, "capture new shape replay 1");
  failures += replay(exec, handle, stream, &fresh, 313, "capture new shape replay 2");
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  job_free(&fresh);

  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  printf("capture: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* threads */

enum { THREADS = 4, CALLS = 3 };

typedef struct {
  int index;
  pthread_barrier_t *barrier;
  int failures;
} worker_t;

/* Each thread prepares its operands, waits for the others, then queues its calls back to back on its own stream so
   that the threads' products run at the same time. */
static void *worker(void *argument) {
  worker_t *w = argument;
  cublasHandle_t handle;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  const cublasOperation_t ta = w->index & 1 ? CUBLAS_OP_T : CUBLAS_OP_N, tb = w->index & 2 ? CUBLAS_OP_T : CUBLAS_OP_N;
  job_t jobs[CALLS];
  for (int c = 0; c < CALLS; ++c) {
    job_init(&jobs[c], 2048, 2048, 4096, ta, tb, 1.0f - 0.25f * c, c == CALLS - 1 ? 0.5f : 0.0f);
    job_fill(&jobs[c], handle, 400 + 10 * w->index + c);
    job_reset_c(&jobs[c], stream);
  }
  const int waited = pthread_barrier_wait(w->barrier);
  if (waited != 0 && waited != PTHREAD_BARRIER_SERIAL_THREAD)
    fail_call(__FILE__, __LINE__, "pthread_barrier_wait", "error");
  for (int c = 0; c < CALLS; ++c) sgemm(handle, &jobs[c].g);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  for (int c = 0; c < CALLS; ++c) {
    char label[64];
    snprintf(label, sizeof(label), "threads thread %d call %d", w->index, c);
    w->failures += job_check(&jobs[c], stream, label);
    job_free(&jobs[c]);
  }
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return NULL;
}

int mode_threads(void) {
  print_device();
  /* The runtime's context exists before the threads start, as in most programs. */
  CHECK_CUDA(cudaFree(NULL));
  pthread_barrier_t barrier;
  if (pthread_barrier_init(&barrier, NULL, THREADS) != 0)
    fail_call(__FILE__, __LINE__, "pthread_barrier_init", "error");
  pthread_t threads[THREADS];
  worker_t workers[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    workers[t].index = t, workers[t].barrier = &barrier, workers[t].failures = 0;
    if (pthread_create(&threads[t], NULL, worker, &workers[t]) != 0)
      fail_call(__FILE__, __LINE__, "pthread_create", "error");
  }
  int failures = 0;
  for (int t = 0; t < THREADS; ++t) {
    if (pthread_join(threads[t], NULL) != 0) fail_call(__FILE__, __LINE__, "pthread_join", "error");
    failures += workers[t].failures;
  }
  pthread_barrier_destroy(&barrier);

  /* Two handles on two streams, used in turn by one thread, all calls in flight before any is waited for. */
  cublasHandle_t handles[2];
  cudaStream_t streams[2];
  job_t jobs[4];
  for (int h = 0; h < 2; ++h) {
    CHECK_CUDA(cudaStreamCreateWithFlags(&streams[h], cudaStreamNonBlocking));
    CHECK_CUBLAS(cublasCreate(&handles[h]));
    CHECK_CUBLAS(cublasSetStream(handles[h], streams[h]));
  }
  for (int c = 0; c < 4; ++c) {
    job_init(&jobs[c], 2048, 2048, 4096, CUBLAS_OP_N, c & 1 ? CUBLAS_OP_T : CUBLAS_OP_N, c & 2 ? -1.0f : 1.0f, 0.0f);
    job_fill(&jobs[c], handles[c % 2], 500 + c);
    job_reset_c(&jobs[c], streams[c % 2]);
  }
  for (int c = 0; c < 4; ++c) sgemm(handles[c % 2], &jobs[c].g);
  for (int h = 0; h < 2; ++h) CHECK_CUDA(cudaStreamSynchronize(streams[h]));
  for (int c = 0; c < 4; ++c) {
    char label[64];
    snprintf(label, sizeof(label), "threads handle %d call %d", c % 2, c);
    failures += job_check(&jobs[c], streams[c % 2], label);
    job_free(&jobs[c]);
  }
  for (int h = 0; h < 2; ++h) {
    CHECK_CUBLAS(cublasDestroy(handles[h]));
    CHECK_CUDA(cudaStreamDestroy(streams[h]));
  }
  printf("threads: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
