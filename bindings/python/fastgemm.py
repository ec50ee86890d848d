# SPDX-License-Identifier: Apache-2.0
"""fastgemm for Python: the C ABI of a shared libfastgemm, through ctypes.

    import cupy
    import fastgemm

    a = cupy.random.rand(512, 256, dtype=cupy.float32)
    b = cupy.random.rand(256, 128, dtype=cupy.float32)
    c = cupy.empty((512, 128), dtype=cupy.float32)
    with fastgemm.Handle() as handle:
        handle.matmul(a, b, c)                                   # c = a @ b

Device arrays are CuPy arrays (or anything with __cuda_array_interface__), PyTorch tensors (data_ptr()),
or device addresses as ints. Calls are asynchronous on the handle's stream, as in C. Every failing call
raises fastgemm.Error, which carries the status and fg_last_error_message().

The library is the file named by the FASTGEMM_LIBRARY environment variable; else libfastgemm.so(.0)
beside this file; else the one in the lib directory of the prefix this file is installed in
(<prefix>/share/fastgemm/python/fastgemm.py), or of Python's prefix (pip install ./bindings/python into
the prefix fastgemm is installed in); else the one that the install this file came from recorded in
_fastgemm_paths.py beside it (the wheel in <prefix>/share/fastgemm/python, pip installed into any
environment); else whatever the system's loader finds. Every install of this version has the shared
library (a static build installs libfastgemm.so.0 beside libfastgemm.a).

fastgemm.matmul(a, b, math=...) is the one-call form: NumPy arrays through fg_sgemm_host, device arrays of
any framework through __cuda_array_interface__ or DLPack.
"""
import ctypes
import ctypes.util
import enum
import os
import pathlib
import sys
import threading
import weakref

__all__ = [
    "Status", "Layout", "Op", "SgemmAlgo", "MathMode", "DType", "RowmeanAlgo", "Error", "Handle", "check",
    "library", "version", "status_name", "status_string", "last_error_message", "last_cuda_error",
    "sgemm_algo_name", "math_mode_name", "rowmean_algo_name", "matmul",
    "Reproducibility", "reproducibility_name",
]


class Status(enum.IntEnum):
    """fg_status_t: Status.X is FG_STATUS_X."""
    SUCCESS = 0
    INVALID_VALUE = 1
    INVALID_HANDLE = 2
    NOT_SUPPORTED = 3
    NO_DEVICE = 4
    ALLOC_FAILED = 5
    CUDA_ERROR = 6
    CUBLAS_ERROR = 7
    INTERNAL_ERROR = 8


class Layout(enum.IntEnum):
    """fg_layout_t: Layout.ROW_MAJOR is FG_ROW_MAJOR (CBLAS's value)."""
    ROW_MAJOR = 101
    COL_MAJOR = 102


class Op(enum.IntEnum):
    """fg_op_t: Op.T is FG_OP_T (CBLAS's value)."""
    N = 111
    T = 112
    C = 113


class SgemmAlgo(enum.IntEnum):
    """fg_sgemm_algo_t: SgemmAlgo.X is FG_SGEMM_X."""
    AUTO = 0
    NAIVE = 1
    SMEM = 2
    SMEM_VEC4 = 3
    BANK_FREE = 4
    DOUBLE_BUFFER = 5
    PIPELINED = 6
    SMALL_TILE = 7
    SPLIT_K = 8
    OZAKI_INT8 = 9
    CUBLAS = 100


class MathMode(enum.IntEnum):
    """fg_math_mode_t: MathMode.FP32_EMULATED is FG_MATH_FP32_EMULATED."""
    FP32 = 0
    FP32_EMULATED = 1


class Reproducibility(enum.IntEnum):
    """fg_reproducibility_t: Reproducibility.SHAPE is FG_REPRODUCIBLE_SHAPE."""
    RUN = 0
    SHAPE = 1


class DType(enum.IntEnum):
    """fg_dtype_t: DType.F32 is FG_F32."""
    F32 = 0
    F64 = 1


class RowmeanAlgo(enum.IntEnum):
    """fg_rowmean_algo_t: RowmeanAlgo.X is FG_ROWMEAN_X."""
    AUTO = 0
    SINGLE_BLOCK = 1
    BLOCK_PER_BATCH = 2
    COALESCED = 3
    TWO_PASS = 4
    FUSED = 5
    STAGED = 6
    RELAY = 7
    PIPELINED = 7  # deprecated: the former name of RELAY, an alias (RowmeanAlgo.PIPELINED is RowmeanAlgo.RELAY)
    CUBLAS = 100


_int = ctypes.c_int
_i64 = ctypes.c_int64
_float = ctypes.c_float
_pointer = ctypes.c_void_p
_string = ctypes.c_char_p
_int_out = ctypes.POINTER(ctypes.c_int)
_pointer_out = ctypes.POINTER(ctypes.c_void_p)

# Every function of fastgemm.h: (return type, argument types), enumerations as int.
_PROTOTYPES = {
    "fg_version": (_int, []),
    "fg_status_name": (_string, [_int]),
    "fg_status_string": (_string, [_int]),
    "fg_last_error_message": (_string, []),
    "fg_last_cuda_error": (_int, []),
    "fg_create": (_int, [_pointer_out]),
    "fg_destroy": (_int, [_pointer]),
    "fg_set_stream": (_int, [_pointer, _pointer]),
    "fg_get_stream": (_int, [_pointer, _pointer_out]),
    "fg_set_workspace": (_int, [_pointer, _pointer, ctypes.c_size_t]),
    "fg_sgemm_workspace_size": (_int, [_pointer, _int, _int, _int, _i64, _i64, _i64, _i64,
                                       ctypes.POINTER(ctypes.c_size_t)]),
    "fg_rowmean_workspace_size": (_int, [_pointer, _int, _i64, _i64, _i64, ctypes.POINTER(ctypes.c_size_t)]),
    "fg_sgemm": (_int, [_pointer, _int, _int, _int, _i64, _i64, _i64, _float, _pointer, _i64, _pointer, _i64,
                        _float, _pointer, _i64]),
    "fg_sgemm_strided_batched": (_int, [_pointer, _int, _int, _int, _i64, _i64, _i64, _float, _pointer, _i64,
                                        _i64, _pointer, _i64, _i64, _float, _pointer, _i64, _i64, _i64]),
    "fg_set_sgemm_algo": (_int, [_pointer, _int]),
    "fg_get_sgemm_algo": (_int, [_pointer, _int_out]),
    "fg_get_last_sgemm_algo": (_int, [_pointer, _int_out]),
    "fg_get_last_sgemm_emulation": (_int, [_pointer, _int_out, ctypes.POINTER(ctypes.c_int64)]),
    "fg_sgemm_algo_name": (_string, [_int]),
    "fg_set_math_mode": (_int, [_pointer, _int]),
    "fg_get_math_mode": (_int, [_pointer, _int_out]),
    "fg_math_mode_name": (_string, [_int]),
    "fg_set_reproducibility": (_int, [_pointer, _int]),
    "fg_get_reproducibility": (_int, [_pointer, _int_out]),
    "fg_reproducibility_name": (_string, [_int]),
    "fg_sgemm_host": (_int, [_pointer, _int, _int, _int, _i64, _i64, _i64, _float, _pointer, _i64, _pointer, _i64,
                             _float, _pointer, _i64]),
    "fg_set_devices": (_int, [_pointer, _int_out, _int]),
    "fg_get_devices": (_int, [_pointer, ctypes.POINTER(ctypes.c_int), _int, _int_out]),
    "fg_rowmean_matvec": (_int, [_pointer, _int, _pointer, _pointer, _pointer, _i64, _i64, _i64]),
    "fg_set_rowmean_algo": (_int, [_pointer, _int]),
    "fg_get_rowmean_algo": (_int, [_pointer, _int_out]),
    "fg_get_last_rowmean_algo": (_int, [_pointer, _int_out]),
    "fg_rowmean_algo_name": (_string, [_int]),
}

_library = None


def _library_location():
    explicit = os.environ.get("FASTGEMM_LIBRARY")
    if explicit:
        return explicit
    for candidate in _library_candidates():
        if candidate.is_file():
            return str(candidate)
    recorded = _recorded_library()
    if recorded and os.path.isfile(recorded):
        return recorded
    return ctypes.util.find_library("fastgemm") or f"libfastgemm.so.{_SONAME_VERSION}"


def _recorded_library():
    """The library that fastgemm's install recorded in _fastgemm_paths.py beside this file, or None. Read
    from this file's own directory, not imported: another _fastgemm_paths on sys.path belongs to another
    copy of the module."""
    record = pathlib.Path(__file__).resolve().with_name("_fastgemm_paths.py")
    try:
        source = record.read_text(encoding="utf-8")
    except OSError:
        return None
    values = {}
    exec(compile(source, str(record), "exec"), values)
    return values.get("LIBRARY")


_SONAME_VERSION = 0


def _library_directories():
    here = pathlib.Path(__file__).resolve().parent
    directories = [here]
    prefixes = [here.parents[2]] if len(here.parents) >= 3 else []
    prefixes.append(pathlib.Path(sys.prefix))
    for prefix in prefixes:
        directories += [prefix / "lib", prefix / "lib64"]
    return directories


def _library_candidates():
    for directory in _library_directories():
        for name in ("libfastgemm.so", f"libfastgemm.so.{_SONAME_VERSION}"):
            yield directory / name


def _static_only_hint():
    """A sentence for the error when a libfastgemm.a is installed where no shared library was found."""
    recorded = _recorded_library()
    near_recorded = [pathlib.Path(recorded).parent] if recorded else []
    for directory in _library_directories() + near_recorded + [pathlib.Path("/usr/local/lib"),
                                                                pathlib.Path("/usr/lib")]:
        if (directory / "libfastgemm.a").is_file():
            return (f"; only a static libfastgemm is installed ({directory / 'libfastgemm.a'}), which Python "
                    "cannot load: install fastgemm from a build of this version (it installs libfastgemm.so."
                    f"{_SONAME_VERSION} beside the static library) or a shared build (-DBUILD_SHARED_LIBS=ON)")
    return ""


def _moved_install_hint():
    """A sentence for the error when the library that the install recorded is gone (moved or removed)."""
    recorded = _recorded_library()
    if os.environ.get("FASTGEMM_LIBRARY") or not recorded or os.path.isfile(recorded):
        return ""
    return f"; the fastgemm install this module came from had it at {recorded}, which is no longer there"


def library():
    """The loaded libfastgemm as a ctypes.CDLL whose fg_ functions carry their prototypes, for calls the
    rest of this module does not wrap. Loaded on first use; raises OSError when it cannot be."""
    global _library
    if _library is None:
        location = _library_location()
        try:
            loaded = ctypes.CDLL(location)
            for name, (restype, argtypes) in _PROTOTYPES.items():
                function = getattr(loaded, name)
                function.restype = restype
                function.argtypes = argtypes
        except (OSError, AttributeError) as error:
            raise OSError(f"fastgemm: cannot use {location} as libfastgemm ({error}){_static_only_hint()}"
                          f"{_moved_install_hint()}; set FASTGEMM_LIBRARY to the path of a shared libfastgemm "
                          "of this version") from error
        _library = loaded
    return _library


_LIMITS = {_int: (-2**31, 2**31 - 1), _i64: (-2**63, 2**63 - 1), ctypes.c_size_t: (0, 2**64 - 1)}


def _call(name, *arguments):
    """library().name(*arguments), each Python int first checked to fit its C type: ctypes would pass it cut
    to its low bits (m = 2**64 + 4 as 4), and nothing is narrowed silently."""
    for position, (value, ctype) in enumerate(zip(arguments, _PROTOTYPES[name][1]), start=1):
        limits = _LIMITS.get(ctype)
        if limits is not None and isinstance(value, int) and not limits[0] <= value <= limits[1]:
            raise ValueError(f"fastgemm: {value} does not fit {name}'s argument {position} "
                             f"({'int' if ctype is _int else 'int64_t' if ctype is _i64 else 'size_t'})")
    return getattr(library(), name)(*arguments)


def _name_of(function, value):
    """A name function's answer, the one for an unknown value (-1 is none) where no C int holds the value
    (ctypes would cut it to another, perhaps known one)."""
    value = int(value)
    if not _LIMITS[_int][0] <= value <= _LIMITS[_int][1]:
        value = -1
    return _text(getattr(library(), function)(value))


def _text(value):
    return value.decode("utf-8", "replace") if value is not None else ""


def _as_enum(kind, value):
    try:
        return kind(value)
    except ValueError:
        return value


def version():
    """The library's version as (major, minor, patch)."""
    number = library().fg_version()
    return number // 10000, number // 100 % 100, number % 100


def status_name(status):
    """"FG_STATUS_INVALID_VALUE"; "FG_STATUS_UNKNOWN" for any other value."""
    return _name_of("fg_status_name", status)


def status_string(status):
    """One sentence describing the status."""
    return _name_of("fg_status_string", status)


def last_error_message():
    """This thread's last failure message, naming the function and the argument; "" if none."""
    return _text(library().fg_last_error_message())


def last_cuda_error():
    """The cudaError_t behind this thread's last FG_STATUS_CUDA_ERROR; 0 if none."""
    return library().fg_last_cuda_error()


def sgemm_algo_name(algo):
    """"double_buffer"; "unknown" for any other value."""
    return _name_of("fg_sgemm_algo_name", algo)


def math_mode_name(mode):
    """"fp32" or "fp32_emulated"; "unknown" for any other value."""
    return _name_of("fg_math_mode_name", mode)


def reproducibility_name(level):
    """"run" or "shape"; "unknown" for any other value."""
    return _name_of("fg_reproducibility_name", level)


def rowmean_algo_name(algo):
    """"coalesced"; "unknown" for any other value."""
    return _name_of("fg_rowmean_algo_name", algo)


class Error(RuntimeError):
    """A failed call: status (a Status), status_name ("FG_STATUS_NO_DEVICE") and the library's message."""

    def __init__(self, status, message):
        self.status = _as_enum(Status, status)
        self.status_name = status_name(status)
        self.message = message
        summary = f"{self.status_name} ({int(status)})"
        super().__init__(f"{summary}: {message}" if message else summary)


def check(status):
    """Raises Error for any status but Status.SUCCESS, as every wrapper here does."""
    if status != Status.SUCCESS:
        raise Error(status, last_error_message())


def _address(array):
    if array is None or isinstance(array, int):
        return array
    data_ptr = getattr(array, "data_ptr", None)
    if callable(data_ptr):
        return data_ptr()
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is not None:
        return interface["data"][0]
    raise TypeError(f"fastgemm: a {type(array).__name__} is no device array: pass a CuPy array, a PyTorch tensor, "
                    "an object with __cuda_array_interface__, or a device address as an int")


def _any_address(array):
    """The address of host memory (a numpy array, anything with __array_interface__) or of a device array."""
    interface = getattr(array, "__array_interface__", None)
    if interface is not None:
        return interface["data"][0]
    return _address(array)


def _stream_address(stream):
    if stream is None or isinstance(stream, int):
        return stream
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"fastgemm: a {type(stream).__name__} is no CUDA stream")


def _describe(array):
    """(address, shape, strides in elements, element type as "f4" or "f8") of a device array."""
    if callable(getattr(array, "data_ptr", None)) and callable(getattr(array, "stride", None)):
        kind = {"torch.float32": "f4", "torch.float64": "f8"}.get(str(array.dtype), str(array.dtype))
        return array.data_ptr(), tuple(array.shape), tuple(array.stride()), kind
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is None:
        raise TypeError(f"fastgemm: a {type(array).__name__} carries no shape: pass a CuPy array or a PyTorch tensor")
    shape = tuple(interface["shape"])
    typestr = interface["typestr"]
    kind = typestr[1:]
    item_size = int(kind[1:])
    if typestr[0] not in ("|", "=", "<" if sys.byteorder == "little" else ">"):
        kind = typestr  # the other byte order: no element type fastgemm computes with
    strides = interface.get("strides")
    if strides is None:
        dense = []
        extent = 1
        for size in reversed(shape):
            dense.insert(0, extent)
            extent *= size
        strides = dense
    else:
        if any(stride % item_size for stride in strides):
            raise ValueError(f"fastgemm: an array with strides {tuple(strides)} (bytes) is no array of its "
                             f"{item_size}-byte elements: its strides must be whole elements")
        strides = [stride // item_size for stride in strides]
    return interface["data"][0], shape, tuple(strides), kind


def _matrix_operand(array, name):
    """(address, rows, columns, op, leading dimension) of a 2-D float32 array read as a row-major matrix:
    op N when its rows are contiguous, op T when its columns are (a transposed view)."""
    address, shape, strides, kind = _describe(array)
    if len(shape) != 2 or kind != "f4":
        raise ValueError(f"fastgemm: {name} must be a 2-D float32 array, not {len(shape)}-D {kind}")
    rows, columns = shape
    if rows == 0 or columns == 0:  # no element: any strides; k == 0 reads nothing, an empty C is not written
        return address, rows, columns, Op.N, max(1, columns)
    if strides[1] == 1 or columns == 1:
        op, leading = Op.N, (strides[0] if rows > 1 else columns)
        contiguous = columns
    elif strides[0] == 1 or rows == 1:
        op, leading = Op.T, (strides[1] if columns > 1 else rows)
        contiguous = rows
    else:
        op, leading, contiguous = None, 0, 1
    if op is None or leading < max(1, contiguous):
        raise ValueError(f"fastgemm: {name} with strides {strides} (elements) is neither rows nor columns of a "
                         "matrix with a leading dimension")
    return address, rows, columns, op, leading


def _dense(array, name, dimensions):
    address, shape, strides, kind = _describe(array)
    if len(shape) != dimensions or kind not in ("f4", "f8"):
        raise ValueError(f"fastgemm: {name} must be a {dimensions}-D float32 or float64 array")
    extent = 1
    for size, stride in reversed(list(zip(shape, strides))):
        if size > 1 and stride != extent:
            raise ValueError(f"fastgemm: {name} must be C-contiguous")
        extent *= size
    return address, shape, kind


class Handle:
    """A fastgemm handle on the calling thread's current CUDA device, on the given stream (default: the
    legacy default stream). A context manager: leaving the with block destroys it. Every failing call
    raises Error; after close(), calls raise Error with Status.INVALID_HANDLE."""

    def __init__(self, stream=None):
        lib = library()
        created = ctypes.c_void_p()
        check(lib.fg_create(ctypes.byref(created)))
        self._handle = created.value
        self._destroy = weakref.finalize(self, lib.fg_destroy, created.value)
        if stream is not None:
            self.stream = stream

    def close(self):
        """Destroys the handle; closing again does nothing."""
        if self._destroy.alive:
            self._handle = None
            check(self._destroy())

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    @property
    def pointer(self):
        """The fg_handle_t as an int (None once closed), for library() calls this class does not wrap."""
        return self._handle

    @property
    def stream(self):
        """The cudaStream_t calls enqueue on, as an int (None: the legacy default stream). Accepts an int,
        a cupy.cuda.Stream or a torch.cuda.Stream."""
        stream = ctypes.c_void_p()
        check(library().fg_get_stream(self._handle, ctypes.byref(stream)))
        return stream.value

    @stream.setter
    def stream(self, stream):
        check(library().fg_set_stream(self._handle, _stream_address(stream)))

    def set_workspace(self, workspace, nbytes):
        """Hands the handle nbytes of caller-owned device memory (an int address, 256-byte aligned) as its
        workspace, so that no call allocates; set_workspace(None, 0) returns to a handle-owned one."""
        check(_call("fg_set_workspace", self._handle, workspace, nbytes))

    def sgemm_workspace_size(self, layout, transa, transb, m, n, k, batch_count=1):
        """Bytes of workspace the selected SGEMM algorithm needs for the problem."""
        nbytes = ctypes.c_size_t()
        check(_call("fg_sgemm_workspace_size", self._handle, int(layout), int(transa), int(transb), m, n, k,
                                                batch_count, ctypes.byref(nbytes)))
        return nbytes.value

    def rowmean_workspace_size(self, dtype, L, M, N):
        """Bytes of workspace the selected rowmean algorithm needs for the problem."""
        nbytes = ctypes.c_size_t()
        check(_call("fg_rowmean_workspace_size", self._handle, int(dtype), L, M, N, ctypes.byref(nbytes)))
        return nbytes.value

    @property
    def sgemm_algo(self):
        """The SgemmAlgo later sgemm calls use (SgemmAlgo.AUTO by default)."""
        algo = ctypes.c_int()
        check(library().fg_get_sgemm_algo(self._handle, ctypes.byref(algo)))
        return _as_enum(SgemmAlgo, algo.value)

    @sgemm_algo.setter
    def sgemm_algo(self, algo):
        check(_call("fg_set_sgemm_algo", self._handle, int(algo)))

    @property
    def last_sgemm_algo(self):
        """The SgemmAlgo the last sgemm call of this handle ran (AUTO's choice, when AUTO is selected)."""
        algo = ctypes.c_int()
        check(library().fg_get_last_sgemm_algo(self._handle, ctypes.byref(algo)))
        return _as_enum(SgemmAlgo, algo.value)

    @property
    def math_mode(self):
        """The MathMode of later sgemm calls: MathMode.FP32 by default, or what FASTGEMM_MATH said when the
        handle was created. MathMode.FP32_EMULATED gives FP32 accuracy from tensor-core products where that
        is faster (see fg_set_math_mode)."""
        mode = ctypes.c_int()
        check(library().fg_get_math_mode(self._handle, ctypes.byref(mode)))
        return _as_enum(MathMode, mode.value)

    @math_mode.setter
    def math_mode(self, mode):
        check(_call("fg_set_math_mode", self._handle, int(mode)))

    @property
    def reproducibility(self):
        """The Reproducibility of later sgemm calls: Reproducibility.RUN by default, or what
        FASTGEMM_REPRODUCIBLE said when the handle was created. Reproducibility.SHAPE makes every element of C
        independent of the product's shape, in FP32 mode (see fg_set_reproducibility)."""
        level = ctypes.c_int()
        check(library().fg_get_reproducibility(self._handle, ctypes.byref(level)))
        return _as_enum(Reproducibility, level.value)

    @reproducibility.setter
    def reproducibility(self, level):
        check(_call("fg_set_reproducibility", self._handle, int(level)))

    @property
    def rowmean_algo(self):
        """The RowmeanAlgo later rowmean_matvec calls use (RowmeanAlgo.AUTO by default)."""
        algo = ctypes.c_int()
        check(library().fg_get_rowmean_algo(self._handle, ctypes.byref(algo)))
        return _as_enum(RowmeanAlgo, algo.value)

    @rowmean_algo.setter
    def rowmean_algo(self, algo):
        check(_call("fg_set_rowmean_algo", self._handle, int(algo)))

    @property
    def last_rowmean_algo(self):
        """The RowmeanAlgo the last rowmean_matvec call of this handle ran (AUTO's choice, when AUTO is selected)."""
        algo = ctypes.c_int()
        check(library().fg_get_last_rowmean_algo(self._handle, ctypes.byref(algo)))
        return _as_enum(RowmeanAlgo, algo.value)

    def sgemm(self, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
        """C := alpha * op(A) * op(B) + beta * C, as fg_sgemm."""
        check(_call("fg_sgemm", self._handle, layout, transa, transb, m, n, k, alpha, _address(A), lda,
                                 _address(B), ldb, beta, _address(C), ldc))

    def sgemm_strided_batched(self, layout, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b,
                              beta, C, ldc, stride_c, batch_count):
        """batch_count products C_i := alpha * op(A_i) * op(B_i) + beta * C_i, as fg_sgemm_strided_batched
        (strides in elements)."""
        check(_call("fg_sgemm_strided_batched", self._handle, layout, transa, transb, m, n, k, alpha,
                                                 _address(A), lda, stride_a, _address(B), ldb, stride_b, beta,
                                                 _address(C), ldc, stride_c, batch_count))

    def sgemm_host(self, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
        """C := alpha * op(A) * op(B) + beta * C, as fg_sgemm_host: operands anywhere (numpy arrays, device
        arrays, addresses as ints), of any size; returns once C is written."""
        check(_call("fg_sgemm_host", self._handle, layout, transa, transb, m, n, k, alpha, _any_address(A), lda,
                                      _any_address(B), ldb, beta, _any_address(C), ldc))

    @property
    def devices(self):
        """The device ordinals sgemm_host spreads its tiles over (the handle's own device by default)."""
        count = ctypes.c_int()
        check(library().fg_get_devices(self._handle, None, 0, ctypes.byref(count)))
        ordinals = (ctypes.c_int * max(1, count.value))()
        check(library().fg_get_devices(self._handle, ordinals, count.value, ctypes.byref(count)))
        return [ordinals[i] for i in range(count.value)]

    @devices.setter
    def devices(self, ordinals):
        ordinals = [int(ordinal) for ordinal in (ordinals or [])]
        for ordinal in ordinals:
            if not _LIMITS[_int][0] <= ordinal <= _LIMITS[_int][1]:
                raise ValueError(f"fastgemm: device ordinal {ordinal} does not fit an int")
        array = (ctypes.c_int * len(ordinals))(*ordinals) if ordinals else None
        check(_call("fg_set_devices", self._handle, array, len(ordinals)))

    def rowmean_matvec(self, dtype, input, matrix, output, L, M, N):
        """output (L x N) = matrix (L x L) times the row means of input (N x L x M), as fg_rowmean_matvec."""
        check(_call("fg_rowmean_matvec", self._handle, dtype, _address(input), _address(matrix),
                                          _address(output), L, M, N))

    def matmul(self, a, b, out, alpha=1.0, beta=0.0):
        """out := alpha * a @ b + beta * out for 2-D float32 CuPy arrays or PyTorch tensors; a and b may be
        transposed views, out must have contiguous rows. Returns out."""
        a_address, m, k, transa, lda = _matrix_operand(a, "a")
        b_address, b_rows, n, transb, ldb = _matrix_operand(b, "b")
        c_address, c_rows, c_columns, c_op, ldc = _matrix_operand(out, "out")
        if b_rows != k or (c_rows, c_columns) != (m, n):
            raise ValueError(f"fastgemm: shapes {m}x{k} @ {b_rows}x{n} -> {c_rows}x{c_columns} do not match")
        if c_op != Op.N:
            raise ValueError("fastgemm: out must have contiguous rows")
        self.sgemm(Layout.ROW_MAJOR, transa, transb, m, n, k, alpha, a_address, lda, b_address, ldb, beta,
                   c_address, ldc)
        return out

    def rowmean_matvec_arrays(self, input, matrix, output):
        """rowmean_matvec with the sizes and the element type read from C-contiguous CuPy arrays or PyTorch
        tensors: input N x L x M, matrix L x L, output L x N, all float32 or all float64. Returns output."""
        input_address, (N, L, M), kind = _dense(input, "input", 3)
        matrix_address, matrix_shape, matrix_kind = _dense(matrix, "matrix", 2)
        output_address, output_shape, output_kind = _dense(output, "output", 2)
        if matrix_shape != (L, L) or output_shape != (L, N):
            raise ValueError(f"fastgemm: input {N}x{L}x{M} needs matrix {L}x{L} and output {L}x{N}, not "
                             f"{matrix_shape[0]}x{matrix_shape[1]} and {output_shape[0]}x{output_shape[1]}")
        if not kind == matrix_kind == output_kind:
            raise ValueError("fastgemm: input, matrix and output must have one element type")
        dtype = DType.F32 if kind == "f4" else DType.F64
        self.rowmean_matvec(dtype, input_address, matrix_address, output_address, L, M, N)
        return output


# fastgemm.matmul: one call, no handle to manage. NumPy arrays go through fg_sgemm_host (the library stages
# them through the GPU in tiles), device arrays through fg_sgemm; neither needs CuPy.

_per_thread = threading.local()
_KDL_CUDA = 2  # DLPack's device type of CUDA memory


def _thread_handle():
    """This thread's handle for matmul, with the math mode it was created with (FASTGEMM_MATH's)."""
    handle = getattr(_per_thread, "handle", None)
    if handle is None:
        handle = Handle()
        _per_thread.handle = handle
        _per_thread.default_math = handle.math_mode
    return handle


def _math_mode(math):
    if math is None or isinstance(math, MathMode):
        return math
    if isinstance(math, str):
        for mode in MathMode:
            if mode.name.lower() == math.lower():
                return mode
    raise ValueError(f"fastgemm: math must be None, 'fp32', 'fp32_emulated' or a fastgemm.MathMode, not {math!r}")


def _is_host(array):
    return hasattr(array, "__array_interface__") and not hasattr(array, "__cuda_array_interface__")


class _DLPackView:
    """A device array known only through DLPack, seen as __cuda_array_interface__: the capsule is kept (and
    the producer's array with it) for as long as this view lives, and never consumed."""

    class _Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class _DataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class _Tensor(ctypes.Structure):
        pass

    _Tensor._fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                        ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    def __init__(self, array, name):
        device_type, _ = array.__dlpack_device__()
        if device_type != _KDL_CUDA:
            raise TypeError(f"fastgemm: {name} is DLPack memory of device type {device_type}, not CUDA memory")
        # stream 1: the legacy default stream, the one fastgemm computes on, orders the producer's work.
        self._capsule = array.__dlpack__(stream=1)
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        tensor = self._Tensor.from_address(get_pointer(self._capsule, b"dltensor"))
        shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        # DLPack's type codes as __cuda_array_interface__'s typestr letters: int, uint, float, bfloat, complex, bool.
        # Vectors of lanes are elements of their own (strides count them), of no type fastgemm computes with.
        letter = {0: "i", 1: "u", 2: "f", 4: "V", 5: "c", 6: "b"}.get(tensor.dtype.code, "V")
        if tensor.dtype.lanes != 1:
            letter = "V"
        item_size = max(1, tensor.dtype.bits * max(1, tensor.dtype.lanes) // 8)
        kind = f"{letter}{item_size}"
        strides = (None if not tensor.strides else tuple(tensor.strides[i] * item_size for i in range(tensor.ndim)))
        self.__cuda_array_interface__ = {"data": (tensor.data + tensor.byte_offset, False), "shape": shape,
                                         "typestr": "<" + kind, "strides": strides, "version": 3}


def _device_view(array, name):
    if hasattr(array, "__cuda_array_interface__") or callable(getattr(array, "data_ptr", None)):
        return array
    if hasattr(array, "__dlpack__"):
        return _DLPackView(array, name)
    raise TypeError(f"fastgemm: {name} is a {type(array).__name__}: pass NumPy arrays, or device arrays with "
                    "__cuda_array_interface__ or __dlpack__ (CuPy, PyTorch, JAX, Numba)")


def _host_operand(array, name):
    """(address, rows, columns, op, leading dimension, owner) of a 2-D float32 NumPy array, read as
    row-major; owner is the array the address points into (a contiguous copy for a view that is neither rows
    nor columns contiguous), which the caller holds until the call has returned."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(array, numpy.ndarray):
        raise TypeError(f"fastgemm: {name} is a {type(array).__name__}, not a NumPy array")
    if array.ndim != 2:
        raise ValueError(f"fastgemm: {name} must be a 2-D array, not {array.ndim}-D")
    if array.dtype != numpy.float32:
        raise TypeError(f"fastgemm: {name} is {array.dtype}; matmul computes in FP32: pass "
                        f"{name}.astype(numpy.float32)")
    rows, columns = array.shape
    if array.size == 0:  # no element (NumPy gives such arrays zero strides): nothing is read or written
        return array.ctypes.data, rows, columns, Op.N, max(1, columns), array
    item = array.itemsize
    row_stride, column_stride = array.strides
    # Rows (op N) or columns (op T) contiguous, one after the other at a positive leading dimension; any
    # other view (broadcast, reversed, strided both ways) is copied first.
    if column_stride == item or columns == 1:
        leading = row_stride // item if rows > 1 else max(1, columns)
        if row_stride % item == 0 and leading >= max(1, columns):
            return array.ctypes.data, rows, columns, Op.N, leading, array
    if row_stride == item or rows == 1:
        leading = column_stride // item if columns > 1 else max(1, rows)
        if column_stride % item == 0 and leading >= max(1, rows):
            return array.ctypes.data, rows, columns, Op.T, leading, array
    return _host_operand(numpy.ascontiguousarray(array), name)


def _new_device_output(like, rows, columns):
    """A float32 rows x columns device array of like's framework (CuPy or PyTorch), or, for another
    framework, a CuPy or PyTorch array that fastgemm fills and like's namespace takes over through DLPack."""
    module = type(like).__module__.split(".")[0]
    if module == "torch":
        import torch
        return torch.empty((rows, columns), dtype=torch.float32, device=like.device), None
    if module == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty((rows, columns), dtype=cupy.float32), None
    namespace = getattr(like, "__array_namespace__", None)
    for maker in ("cupy", "torch"):
        try:
            library = __import__(maker)
        except ImportError:
            continue
        out = (library.empty((rows, columns), dtype=library.float32) if maker == "cupy"
               else library.empty((rows, columns), dtype=library.float32, device="cuda"))
        return out, (namespace().from_dlpack if namespace is not None else None)
    raise TypeError(f"fastgemm: no way to allocate the result beside a {type(like).__name__}: pass out=, or "
                    "install CuPy or PyTorch")


def _synchronize():
    """Waits for the whole device: matmul returns results that any stream of any framework may read."""
    synchronize = library().cudaDeviceSynchronize
    synchronize.restype, synchronize.argtypes = ctypes.c_int, []
    if synchronize() != 0:
        raise Error(Status.CUDA_ERROR, "cudaDeviceSynchronize failed after fastgemm.matmul")


def matmul(a, b, *, math=None, out=None, alpha=1.0, beta=0.0):
    """out := alpha * a @ b + beta * out, and returns out: 2-D float32 arrays, read as row-major matrices
    (transposed views are taken as they are).

    - NumPy arrays (out a new NumPy array unless given): computed on the GPU through fg_sgemm_host, tiled
      and pipelined through device memory, whatever their size;
    - device arrays of any framework, through __cuda_array_interface__ (CuPy, PyTorch, Numba) or DLPack
      (JAX and others): computed by fg_sgemm on the current device; out is a new array of a's framework
      unless given.

    math: None (the default mode, FASTGEMM_MATH's if set), "fp32" or "fp32_emulated" (FP32's accuracy from
    tensor-core products, see docs/math-mode.md), or a MathMode. Returns once the product is computed.
    Raises TypeError or ValueError for arrays it cannot multiply, Error for a failed call (Status.NO_DEVICE
    without a GPU)."""
    mode = _math_mode(math)
    host = [_is_host(array) for array in (a, b) + ((out,) if out is not None else ())]
    if any(host) and not all(host):
        raise TypeError("fastgemm: matmul takes NumPy arrays or device arrays, not both in one call")
    if all(host):
        # The owners keep copied operands alive until fg_sgemm_host has returned.
        a_address, m, k, transa, lda, a_owner = _host_operand(a, "a")
        b_address, b_rows, n, transb, ldb, b_owner = _host_operand(b, "b")
        if b_rows != k:
            raise ValueError(f"fastgemm: shapes {m}x{k} @ {b_rows}x{n} do not match")
        if out is None:
            import numpy
            out = numpy.empty((m, n), dtype=numpy.float32)
            beta = 0.0
        c_address, c_rows, c_columns, c_op, ldc, _ = _host_operand(out, "out")
        if (c_rows, c_columns) != (m, n) or c_op != Op.N or c_address != out.ctypes.data or not out.flags.writeable:
            raise ValueError(f"fastgemm: out must be a writable {m}x{n} float32 array with contiguous rows")
        handle = _thread_handle()
        handle.math_mode = mode if mode is not None else _per_thread.default_math
        handle.sgemm_host(Layout.ROW_MAJOR, transa, transb, m, n, k, alpha, a_address, lda, b_address, ldb, beta,
                          c_address, ldc)
        del a_owner, b_owner
        return out
    a_view, b_view = _device_view(a, "a"), _device_view(b, "b")
    m, k = _matrix_operand(a_view, "a")[1:3]
    b_rows, n = _matrix_operand(b_view, "b")[1:3]
    # Shapes are checked before anything runs (no handle, no synchronization), as for NumPy arrays.
    out_view = _device_view(out, "out") if out is not None else None
    if out_view is not None:
        c_rows, c_columns, c_op = _matrix_operand(out_view, "out")[1:4]
        if b_rows != k or (c_rows, c_columns) != (m, n):
            raise ValueError(f"fastgemm: shapes {m}x{k} @ {b_rows}x{n} -> {c_rows}x{c_columns} do not match")
        if c_op != Op.N:
            raise ValueError("fastgemm: out must have contiguous rows")
    elif b_rows != k:
        raise ValueError(f"fastgemm: shapes {m}x{k} @ {b_rows}x{n} do not match")
    wrap = None
    if out is None:
        out, wrap = _new_device_output(a, m, n)
        out_view = _device_view(out, "out")
        beta = 0.0
    handle = _thread_handle()
    handle.math_mode = mode if mode is not None else _per_thread.default_math
    _synchronize()  # the operands may still be written on another stream of their framework
    handle.matmul(a_view, b_view, out_view, alpha, beta)
    _synchronize()
    return wrap(out) if wrap is not None else out
