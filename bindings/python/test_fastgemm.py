# SPDX-License-Identifier: Apache-2.0
"""Tests of fastgemm.py. The library's loading, names and error paths run on any machine; the computations
run on a GPU through CuPy and through PyTorch, checked against numpy, and are reported as skipped where
numpy, the array library or the GPU is missing. FASTGEMM_LIBRARY names the shared library under test.

Run with python3 directly; the exit status is 0 when every test passed or was skipped.
"""
import ctypes
import ctypes.util
import importlib.util
import os
import pathlib
import re
import shutil
import sys
import tempfile
import unittest
from unittest import mock

import fastgemm
from fastgemm import DType, Error, Layout, MathMode, Op, Reproducibility, RowmeanAlgo, SgemmAlgo, Status

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]

_device_present = None


def device_present():
    """Whether fastgemm finds a usable GPU: Handle() succeeds, or fails with FG_STATUS_NO_DEVICE."""
    global _device_present
    if _device_present is None:
        try:
            fastgemm.Handle().close()
            _device_present = True
        except Error as error:
            if error.status != Status.NO_DEVICE:
                raise
            _device_present = False
    return _device_present


def python_examples():
    """The ```python blocks of docs/python.md, which these tests run: the NumPy one on any machine (it
    says there is no GPU where there is none), the CuPy one on a GPU."""
    text = (SOURCE_ROOT / "docs" / "python.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def load_copy(module_path):
    """A fresh import of fastgemm.py from module_path, with its own library lookup."""
    spec = importlib.util.spec_from_file_location("fastgemm_copy", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Transposed:
    """The transposed view of a __cuda_array_interface__ array (its columns contiguous)."""

    def __init__(self, array):
        interface = dict(array.__cuda_array_interface__)
        rows, columns = interface["shape"]
        interface["shape"] = (columns, rows)
        interface["strides"] = (4, 4 * columns)
        self.__cuda_array_interface__ = interface


class LibraryTest(unittest.TestCase):
    def test_version_is_the_headers(self):
        header = (SOURCE_ROOT / "include" / "fastgemm" / "fastgemm.h").read_text()
        parts = [int(re.search(rf"#define FG_VERSION_{part} (\d+)", header).group(1))
                 for part in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(fastgemm.version(), tuple(parts))

    def test_package_version_is_the_headers(self):
        pyproject = (SOURCE_ROOT / "bindings" / "python" / "pyproject.toml").read_text()
        version = re.search(r'^version = "([0-9.]+)"', pyproject, re.M).group(1)
        self.assertEqual(tuple(int(part) for part in version.split(".")), fastgemm.version())

    def test_status_names(self):
        for status in Status:
            self.assertEqual(fastgemm.status_name(status), "FG_STATUS_" + status.name)
            self.assertTrue(fastgemm.status_string(status))
        self.assertEqual(fastgemm.status_name(99), "FG_STATUS_UNKNOWN")

    def test_algorithm_names(self):
        for algo in SgemmAlgo:
            if algo is SgemmAlgo.OZAKI_INT8 and fastgemm.sgemm_algo_name(algo) == "unknown":
                continue  # a build without it; the GPU tests check that it is then refused
            self.assertEqual(fastgemm.sgemm_algo_name(algo), algo.name.lower())
        for algo in RowmeanAlgo:
            self.assertEqual(fastgemm.rowmean_algo_name(algo), algo.name.lower())
        # The relay's former name is an alias of the same member, and the library names it "relay".
        self.assertIs(RowmeanAlgo.PIPELINED, RowmeanAlgo.RELAY)
        self.assertIs(RowmeanAlgo["PIPELINED"], RowmeanAlgo.RELAY)
        self.assertIs(RowmeanAlgo(7), RowmeanAlgo.RELAY)
        self.assertEqual(fastgemm.rowmean_algo_name(RowmeanAlgo.PIPELINED), "relay")
        self.assertEqual(fastgemm.sgemm_algo_name(99), "unknown")
        self.assertEqual(fastgemm.rowmean_algo_name(99), "unknown")

    def test_math_mode_names(self):
        for mode in MathMode:
            self.assertEqual(fastgemm.math_mode_name(mode), mode.name.lower())
        self.assertEqual(fastgemm.math_mode_name(2), "unknown")
        self.assertEqual(fastgemm.math_mode_name(-1), "unknown")

    def test_reproducibility_names(self):
        for level in Reproducibility:
            self.assertEqual(fastgemm.reproducibility_name(level), level.name.lower())
        self.assertEqual(fastgemm.reproducibility_name(2), "unknown")
        self.assertEqual(fastgemm.reproducibility_name(-1), "unknown")

    def test_reproducible_variable_naming_no_level(self):
        # Refused before any device is looked for, so with or without a GPU.
        for value in ("bogus", "SHAPE", ""):
            with self.subTest(value), mock.patch.dict(os.environ, {"FASTGEMM_REPRODUCIBLE": value}):
                with self.assertRaises(Error) as caught:
                    fastgemm.Handle()
                self.assertIs(caught.exception.status, Status.INVALID_VALUE)
                self.assertIn("FASTGEMM_REPRODUCIBLE", caught.exception.message)

    def test_math_variable_naming_no_mode(self):
        # Refused before any device is looked for, so with or without a GPU.
        for value in ("bogus", "FP32_EMULATED"):
            with self.subTest(value), mock.patch.dict(os.environ, {"FASTGEMM_MATH": value}):
                with self.assertRaises(Error) as caught:
                    fastgemm.Handle()
                self.assertIs(caught.exception.status, Status.INVALID_VALUE)
                self.assertTrue(caught.exception.message.startswith("fg_create: "), caught.exception.message)
                self.assertIn("FASTGEMM_MATH", caught.exception.message)

    def test_null_handle(self):
        lib = fastgemm.library()
        calls = {
            "fg_set_stream": (None, None),
            "fg_get_stream": (None, ctypes.byref(ctypes.c_void_p())),
            "fg_sgemm": (None, Layout.ROW_MAJOR, Op.N, Op.N, 4, 4, 4, 1.0, None, 4, None, 4, 0.0, None, 4),
            "fg_sgemm_strided_batched": (None, Layout.COL_MAJOR, Op.T, Op.N, 4, 4, 4, 1.0, None, 4, 16, None, 4, 16,
                                         0.0, None, 4, 16, 2),
            "fg_set_sgemm_algo": (None, SgemmAlgo.NAIVE),
            "fg_get_sgemm_algo": (None, ctypes.byref(ctypes.c_int())),
            "fg_get_last_sgemm_algo": (None, ctypes.byref(ctypes.c_int())),
            "fg_get_last_sgemm_emulation": (None, ctypes.byref(ctypes.c_int()), ctypes.byref(ctypes.c_int64())),
            "fg_set_math_mode": (None, MathMode.FP32_EMULATED),
            "fg_get_math_mode": (None, ctypes.byref(ctypes.c_int())),
            "fg_set_reproducibility": (None, Reproducibility.SHAPE),
            "fg_get_reproducibility": (None, ctypes.byref(ctypes.c_int())),
            "fg_sgemm_host": (None, Layout.ROW_MAJOR, Op.N, Op.N, 4, 4, 4, 1.0, None, 4, None, 4, 0.0, None, 4),
            "fg_set_devices": (None, None, 0),
            "fg_get_devices": (None, None, 0, ctypes.byref(ctypes.c_int())),
            "fg_rowmean_matvec": (None, DType.F64, None, None, None, 4, 4, 4),
            "fg_set_rowmean_algo": (None, RowmeanAlgo.TWO_PASS),
            "fg_get_rowmean_algo": (None, ctypes.byref(ctypes.c_int())),
            "fg_get_last_rowmean_algo": (None, ctypes.byref(ctypes.c_int())),
        }
        for name, arguments in calls.items():
            with self.subTest(name), self.assertRaises(Error) as caught:
                fastgemm.check(getattr(lib, name)(*arguments))
            error = caught.exception
            self.assertIs(error.status, Status.INVALID_HANDLE)
            self.assertEqual(error.status_name, "FG_STATUS_INVALID_HANDLE")
            self.assertTrue(error.message.startswith(name + ":"), error.message)
            self.assertIn("FG_STATUS_INVALID_HANDLE (2): " + name, str(error))
        self.assertEqual(lib.fg_destroy(None), Status.SUCCESS)
        self.assertIsInstance(fastgemm.last_cuda_error(), int)

    def test_integers_are_not_narrowed(self):
        # ctypes passes a Python int cut to its C type's low bits: a size past int64_t, an enumerator or status
        # past int must be refused (or named unknown), never passed on as another, valid value.
        handle = fastgemm.Handle.__new__(fastgemm.Handle)
        handle._handle = None  # no device needed: the arguments are checked before the call
        big = 2**64
        calls = [
            ("m", lambda: handle.sgemm(Layout.ROW_MAJOR, Op.N, Op.N, big + 4, 4, 4, 1.0, None, 4, None, 4, 0.0, None,
                                       4)),
            ("layout", lambda: handle.sgemm(2**32 + Layout.ROW_MAJOR, Op.N, Op.N, 4, 4, 4, 1.0, None, 4, None, 4, 0.0,
                                            None, 4)),
            ("stride_c", lambda: handle.sgemm_strided_batched(Layout.ROW_MAJOR, Op.N, Op.N, 4, 4, 4, 1.0, None, 4,
                                                              16, None, 4, 16, 0.0, None, 4, big + 16, 2)),
            ("ldc", lambda: handle.sgemm_host(Layout.ROW_MAJOR, Op.N, Op.N, 4, 4, 4, 1.0, None, 4, None, 4, 0.0, None,
                                              -big + 4)),
            ("N", lambda: handle.rowmean_matvec(DType.F32, None, None, None, 4, 4, big + 1)),
            ("batch_count", lambda: handle.sgemm_workspace_size(Layout.ROW_MAJOR, Op.N, Op.N, 4, 4, 4, big + 1)),
            ("bytes", lambda: handle.set_workspace(None, -1)),
            ("algo", lambda: setattr(handle, "sgemm_algo", 2**32 + SgemmAlgo.NAIVE)),
            ("devices", lambda: setattr(handle, "devices", [2**32])),
        ]
        for name, call in calls:
            with self.subTest(name):
                with self.assertRaises(ValueError) as caught:
                    call()
                self.assertIn("does not fit", str(caught.exception))
        self.assertEqual(fastgemm.status_name(2**32), "FG_STATUS_UNKNOWN")
        self.assertEqual(fastgemm.status_string(2**32 + 1), fastgemm.status_string(-1))
        self.assertEqual(fastgemm.sgemm_algo_name(2**32 + SgemmAlgo.DOUBLE_BUFFER), "unknown")
        self.assertEqual(fastgemm.rowmean_algo_name(-2**32 + RowmeanAlgo.COALESCED), "unknown")
        self.assertEqual(fastgemm.math_mode_name(2**32 + 1), "unknown")
        self.assertEqual(fastgemm.reproducibility_name(2**33), "unknown")

    def test_handle_without_device(self):
        if device_present():
            self.skipTest("a GPU is present: Handle() succeeds")
        with self.assertRaises(Error) as caught:
            fastgemm.Handle()
        self.assertIs(caught.exception.status, Status.NO_DEVICE)
        self.assertEqual(caught.exception.status_name, "FG_STATUS_NO_DEVICE")
        self.assertTrue(caught.exception.message.startswith("fg_create:"), caught.exception.message)
        self.assertIn("FG_STATUS_NO_DEVICE (4): fg_create:", str(caught.exception))


class LookupTest(unittest.TestCase):
    """Where fastgemm.py finds the library, tried on copies of the module laid out as installed."""

    def setUp(self):
        self.library = os.environ.get("FASTGEMM_LIBRARY")
        if not self.library:
            self.skipTest("FASTGEMM_LIBRARY is not set")
        self.directory = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.directory)

    def place(self, module_dir, library_dir):
        module_dir.mkdir(parents=True, exist_ok=True)
        library_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(pathlib.Path(fastgemm.__file__), module_dir / "fastgemm.py")
        (library_dir / "libfastgemm.so").symlink_to(pathlib.Path(self.library).resolve())
        return module_dir / "fastgemm.py"

    def loaded_from(self, module_path):
        with mock.patch.dict(os.environ):
            os.environ.pop("FASTGEMM_LIBRARY")
            copy = load_copy(module_path)
            self.assertEqual(copy.version(), fastgemm.version())
            return copy.library()._name

    def test_beside_the_module(self):
        module = self.place(self.directory, self.directory)
        self.assertEqual(self.loaded_from(module), str(self.directory / "libfastgemm.so"))

    def test_install_prefix(self):
        prefix = self.directory / "prefix"
        module = self.place(prefix / "share" / "fastgemm" / "python", prefix / "lib")
        self.assertEqual(self.loaded_from(module), str(prefix / "lib" / "libfastgemm.so"))

    def record(self, module_path, library):
        """The _fastgemm_paths.py that fastgemm's install writes beside the module."""
        module_path.with_name("_fastgemm_paths.py").write_text(f"LIBRARY = {str(library)!r}\n")

    def test_recorded_by_the_install(self):
        # A wheel's module pip installed into a virtual environment, far from fastgemm's prefix.
        module_dir = self.directory / "env" / "lib" / "python3" / "site-packages"
        module_dir.mkdir(parents=True)
        module = module_dir / "fastgemm.py"
        shutil.copy(pathlib.Path(fastgemm.__file__), module)
        library = self.directory / "prefix" / "lib" / "libfastgemm.so.0"
        library.parent.mkdir(parents=True)
        library.symlink_to(pathlib.Path(self.library).resolve())
        self.record(module, library)
        self.assertEqual(self.loaded_from(module), str(library))
        with mock.patch.dict(os.environ, {"FASTGEMM_LIBRARY": self.library}):
            self.assertEqual(load_copy(module).library()._name, self.library)

    def test_near_the_module_before_the_record(self):
        prefix = self.directory / "prefix"
        module = self.place(prefix / "share" / "fastgemm" / "python", prefix / "lib")
        self.record(module, self.directory / "elsewhere" / "libfastgemm.so.0")
        self.assertEqual(self.loaded_from(module), str(prefix / "lib" / "libfastgemm.so"))

    def test_recorded_library_gone(self):
        module_dir = self.directory / "env" / "lib" / "python3" / "site-packages"
        module_dir.mkdir(parents=True)
        module = module_dir / "fastgemm.py"
        shutil.copy(pathlib.Path(fastgemm.__file__), module)
        gone = self.directory / "moved" / "lib" / "libfastgemm.so.0"
        self.record(module, gone)
        with mock.patch.dict(os.environ), mock.patch("ctypes.util.find_library", return_value=None):
            os.environ.pop("FASTGEMM_LIBRARY")
            copy = load_copy(module)
            copy._SONAME_VERSION = 99  # the loader would find the libfastgemm.so.0 this process loaded
            with self.assertRaises(OSError) as caught:
                copy.version()
        self.assertIn(f"had it at {gone}, which is no longer there", str(caught.exception))
        self.assertIn("FASTGEMM_LIBRARY", str(caught.exception))

    def test_static_only_install(self):
        prefix = self.directory / "static"
        module_dir = prefix / "share" / "fastgemm" / "python"
        module_dir.mkdir(parents=True)
        (prefix / "lib").mkdir()
        shutil.copy(pathlib.Path(fastgemm.__file__), module_dir / "fastgemm.py")
        (prefix / "lib" / "libfastgemm.a").write_bytes(b"!<arch>\n")
        with mock.patch.dict(os.environ), mock.patch("ctypes.util.find_library", return_value=None):
            os.environ.pop("FASTGEMM_LIBRARY")
            copy = load_copy(module_dir / "fastgemm.py")
            copy._SONAME_VERSION = 99  # the loader would find the libfastgemm.so.0 this process loaded
            with self.assertRaises(OSError) as caught:
                copy.version()
        self.assertIn("only a static libfastgemm is installed", str(caught.exception))
        self.assertIn(str(prefix / "lib" / "libfastgemm.a"), str(caught.exception))

    def test_unusable_library(self):
        missing = str(self.directory / "missing" / "libfastgemm.so")
        other = ctypes.util.find_library("m")
        for location in [missing] + ([other] if other else []):
            with self.subTest(location), mock.patch.dict(os.environ, {"FASTGEMM_LIBRARY": location}):
                copy = load_copy(pathlib.Path(fastgemm.__file__))
                with self.assertRaises(OSError) as caught:
                    copy.version()
                self.assertIn(location, str(caught.exception))
                self.assertIn("FASTGEMM_LIBRARY", str(caught.exception))


class ModuleMatmulTest(unittest.TestCase):
    """fastgemm.matmul on NumPy arrays: the refusals on any machine, before any device is touched; the
    products through fg_sgemm_host on a GPU, checked against float64 products."""

    @classmethod
    def setUpClass(cls):
        try:
            import numpy
        except ImportError:
            raise unittest.SkipTest("numpy is not installed")
        cls.np = numpy
        cls.rng = numpy.random.default_rng(11)

    def random(self, *shape):
        return self.rng.uniform(-1, 1, shape).astype(self.np.float32)

    def test_refusals(self):
        np = self.np
        a, b = self.random(6, 4), self.random(4, 5)

        class DeviceLike:
            __cuda_array_interface__ = {"data": (0, False), "shape": (4, 5), "typestr": "<f4", "version": 3}

        cases = [
            ("float64", (a.astype(np.float64), b), {}, TypeError, "astype(numpy.float32)"),
            ("1-D", (a[0], b), {}, ValueError, "2-D"),
            ("3-D", (a.reshape(2, 3, 4), b), {}, ValueError, "2-D"),
            ("shapes", (a, self.random(5, 5)), {}, ValueError, "6x4 @ 5x5"),
            ("list", ([[1.0]], [[1.0]]), {}, TypeError, "list"),
            ("mixed", (a, DeviceLike()), {}, TypeError, "not both"),
            ("math", (a, b), {"math": "fp16"}, ValueError, "'fp16'"),
            ("out shape", (a, b), {"out": np.empty((5, 6), np.float32)}, ValueError, "6x5"),
            ("out columns", (a, b), {"out": np.empty((5, 6), np.float32).T}, ValueError, "contiguous rows"),
            ("out float64", (a, b), {"out": np.empty((6, 5))}, TypeError, "float64"),
        ]
        for name, arguments, keywords, kind, text in cases:
            with self.subTest(name), self.assertRaises(kind) as caught:
                fastgemm.matmul(*arguments, **keywords)
            self.assertIn(text, str(caught.exception))
        read_only = np.zeros((6, 5), np.float32)
        read_only.flags.writeable = False
        with self.assertRaises(ValueError):
            fastgemm.matmul(a, b, out=read_only)

    def test_docs_example(self):
        examples = [block for block in python_examples() if "import numpy" in block]
        self.assertEqual(len(examples), 1, "docs/python.md has no NumPy example")
        exec(compile(examples[0], "docs/python.md", "exec"), {})

    def test_without_device(self):
        if device_present():
            self.skipTest("a GPU is present")
        with self.assertRaises(Error) as caught:
            fastgemm.matmul(self.random(6, 4), self.random(4, 5))
        self.assertIs(caught.exception.status, Status.NO_DEVICE)

    def check(self, got, expected):
        np = self.np
        self.assertEqual(got.dtype, np.float32)
        scale = np.abs(expected).max()
        self.assertTrue(np.all(np.isfinite(got)))
        self.assertLess(np.abs(got - expected).max() / scale, 1e-5)

    def test_copied_operand_is_kept(self):
        # A view that is neither rows nor columns contiguous is copied: the copy comes back with its address,
        # for the caller to hold while the product reads it.
        np = self.np
        strided = self.random(5, 12)[:, ::2]
        address, rows, columns, op, leading, owner = fastgemm._host_operand(strided, "a")
        self.assertEqual((rows, columns, op, leading), (5, 6, fastgemm.Op.N, 6))
        self.assertEqual(address, owner.ctypes.data)
        self.assertTrue(np.array_equal(owner, strided))
        view = self.random(4, 8)[:, 1:7]
        self.assertIs(fastgemm._host_operand(view, "b")[5], view)

    def test_empty_operands(self):
        # NumPy gives a 0-sized array zero strides; k == 0 is C := beta * C, m == 0 or n == 0 a product of
        # nothing: each is computed (or, without a GPU, refused with NO_DEVICE), never refused for its strides.
        np = self.np
        cases = [((5, 0), (0, 3)), ((0, 4), (4, 3)), ((5, 4), (4, 0)), ((0, 0), (0, 0))]
        for a_shape, b_shape in cases:
            with self.subTest(a=a_shape, b=b_shape):
                a, b = np.empty(a_shape, np.float32), np.empty(b_shape, np.float32)
                address, rows, columns, op, leading, owner = fastgemm._host_operand(a, "a")
                self.assertEqual((rows, columns), a_shape)
                self.assertGreaterEqual(leading, max(1, columns if op == Op.N else rows))
                if not device_present():
                    with self.assertRaises(Error) as caught:
                        fastgemm.matmul(a, b)
                    self.assertIs(caught.exception.status, Status.NO_DEVICE)
                    continue
                expected = a.astype(np.float64) @ b.astype(np.float64)
                got = fastgemm.matmul(a, b)
                self.assertEqual(got.shape, expected.shape)
                self.assertTrue(np.array_equal(got, expected))
                poisoned = np.full(expected.shape, np.nan, np.float32)  # beta 0: out is not read
                self.assertIs(fastgemm.matmul(a, b, out=poisoned), poisoned)
                self.assertTrue(np.array_equal(poisoned, expected))

    def test_empty_device_operands(self):
        # A 0-sized device array (dense strides, as __cuda_array_interface__ gives them) is a matrix of that
        # shape: k == 0 or an empty C, not an array fastgemm cannot multiply.
        class DeviceLike:
            def __init__(self, shape, strides=None):
                self.__cuda_array_interface__ = {"data": (4096, False), "shape": shape, "typestr": "<f4",
                                                 "strides": strides, "version": 3}

        for shape, strides in [((5, 0), None), ((0, 3), None), ((0, 0), None), ((5, 0), (0, 4)), ((0, 3), (0, 0))]:
            with self.subTest(shape=shape, strides=strides):
                address, rows, columns, op, leading = fastgemm._matrix_operand(DeviceLike(shape, strides), "a")
                self.assertEqual((address, rows, columns, op), (4096, shape[0], shape[1], Op.N))
                self.assertGreaterEqual(leading, max(1, columns))

    def test_device_shapes_are_checked_before_anything_runs(self):
        # Device arrays that cannot be multiplied raise ValueError before a handle is made, with or without a GPU.
        class DeviceLike:
            def __init__(self, shape, address):
                self.__cuda_array_interface__ = {"data": (address, False), "shape": shape, "typestr": "<f4",
                                                 "version": 3}

        a, b = DeviceLike((6, 4), 4096), DeviceLike((4, 5), 8192)
        cases = [
            ("shapes", (a, DeviceLike((5, 5), 8192)), {}, "6x4 @ 5x5"),
            ("out shape", (a, b), {"out": DeviceLike((5, 6), 16384)}, "-> 5x6"),
            ("out columns", (a, b), {"out": _Transposed(DeviceLike((5, 6), 16384))}, "contiguous rows"),
        ]
        for name, arguments, keywords, text in cases:
            with self.subTest(name), mock.patch.object(fastgemm, "_thread_handle",
                                                       side_effect=AssertionError("a handle was made")):
                with self.assertRaises(ValueError) as caught:
                    fastgemm.matmul(*arguments, **keywords)
                self.assertIn(text, str(caught.exception))

    def test_element_types_that_are_no_float32_are_refused(self):
        # Big-endian float32 through __cuda_array_interface__, and DLPack vectors of four float32 lanes, carry
        # float32 numbers in another form: refused naming the type, never read as plain float32.
        other_order = ">f4" if sys.byteorder == "little" else "<f4"

        class DeviceLike:
            __cuda_array_interface__ = {"data": (4096, False), "shape": (4, 4), "typestr": other_order,
                                        "version": 3}

        with self.assertRaises(ValueError) as caught:
            fastgemm._matrix_operand(DeviceLike(), "a")
        self.assertIn(other_order, str(caught.exception))

        view = fastgemm._DLPackView
        shape = (ctypes.c_int64 * 2)(4, 4)
        tensor = view._Tensor(data=4096, device=view._Device(2, 0), ndim=2, dtype=view._DataType(2, 32, 4),
                              shape=shape, strides=None, byte_offset=0)
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                                       ctypes.c_void_p]
        name = ctypes.create_string_buffer(b"dltensor")

        class Lanes:
            def __dlpack__(self, stream=None):
                return new_capsule(ctypes.addressof(tensor), name, None)

            def __dlpack_device__(self):
                return (2, 0)

        with self.assertRaises(ValueError) as caught:
            fastgemm.matmul(Lanes(), Lanes())
        self.assertIn("float32", str(caught.exception))
        self.assertIn("V16", str(caught.exception))

    def test_strides_off_elements_are_refused(self):
        # __cuda_array_interface__ strides are bytes: rows 10 bytes apart are no matrix of float32 elements, and
        # rounding them down to elements would read other numbers than the array's.
        class DeviceLike:
            __cuda_array_interface__ = {"data": (4096, False), "shape": (3, 2), "typestr": "<f4",
                                        "strides": (10, 4), "version": 3}

        with self.assertRaises(ValueError) as caught:
            fastgemm._matrix_operand(DeviceLike(), "a")
        self.assertIn("strides", str(caught.exception))
        with self.assertRaises(ValueError):
            fastgemm.matmul(DeviceLike(), DeviceLike())

    def test_dlpack_element_type_is_named(self):
        # An array known only through DLPack whose elements are not floats is refused naming its type.
        np = self.np
        if not hasattr(np.ndarray, "__dlpack__"):
            self.skipTest("numpy has no DLPack export")

        class CudaDLPack:  # describes itself as CUDA memory; only its description is read before the call
            def __init__(self, array):
                self.array = array

            def __dlpack__(self, stream=None):
                return self.array.__dlpack__()

            def __dlpack_device__(self):
                return (2, 0)

        integers = np.zeros((4, 4), np.int32)
        with self.assertRaises(ValueError) as caught:
            fastgemm.matmul(CudaDLPack(integers), CudaDLPack(integers))
        self.assertIn("float32", str(caught.exception))
        self.assertIn("i4", str(caught.exception))

    def test_products(self):
        if not device_present():
            self.skipTest("no GPU")
        np = self.np
        for m, n, k in [(1, 1, 1), (33, 17, 65), (300, 257, 129), (1024, 1000, 600)]:
            a, b = self.random(m, k), self.random(k, n)
            expected = a.astype(np.float64) @ b.astype(np.float64)
            for math in (None, "fp32", "fp32_emulated", MathMode.FP32_EMULATED):
                with self.subTest(shape=(m, n, k), math=math):
                    self.check(fastgemm.matmul(a, b, math=math), expected)
            at, bt = np.asfortranarray(a), self.random(n, k).T  # columns contiguous: op T
            self.check(fastgemm.matmul(at, bt), a.astype(np.float64) @ bt.astype(np.float64))
            strided = self.random(m, 2 * k)[:, ::2]  # neither rows nor columns contiguous: copied
            self.check(fastgemm.matmul(strided, b), strided.astype(np.float64) @ b.astype(np.float64))
            out = self.random(m, n)
            previous = out.astype(np.float64)
            result = fastgemm.matmul(a, b, out=out, alpha=-0.5, beta=2.0)
            self.assertIs(result, out)
            self.check(out, -0.5 * expected + 2.0 * previous)
            poisoned = np.full((m, n), np.nan, np.float32)
            self.check(fastgemm.matmul(a, b, out=poisoned), expected)  # beta 0: out is not read


class Backend:
    """The computations, run through one array library (CuPy or PyTorch) and checked with numpy."""
    name = None

    @classmethod
    def setUpClass(cls):
        try:
            import numpy
        except ImportError:
            raise unittest.SkipTest("numpy is not installed")
        try:
            cls.xp = __import__(cls.name)
        except ImportError:
            raise unittest.SkipTest(f"{cls.name} is not installed")
        if not device_present():
            raise unittest.SkipTest("no GPU")
        cls.np = numpy
        cls.rng = numpy.random.default_rng(7)

    def setUp(self):
        self.handle = fastgemm.Handle()
        self.addCleanup(self.handle.close)

    def random(self, *shape, dtype="float32"):
        return self.rng.uniform(-1, 1, shape).astype(dtype)

    def assert_close(self, actual, expected, tolerance):
        worst = float(self.np.max(self.np.abs(actual - expected) / (self.np.abs(expected) + 1)))
        self.assertLessEqual(worst, tolerance)

    def test_module_matmul(self):
        np = self.np
        a, b = self.random(300, 200), self.random(200, 100)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        for math in (None, "fp32_emulated"):
            with self.subTest(math=math):
                result = fastgemm.matmul(self.to_device(a), self.to_device(b), math=math)
                self.assertEqual(type(result).__module__.split(".")[0], self.name)
                got = self.to_host(result)
                self.assertLess(np.abs(got - expected).max() / np.abs(expected).max(), 1e-5)
        out = self.to_device(np.full((300, 100), np.nan, np.float32))
        self.assertIs(fastgemm.matmul(self.to_device(a), self.to_device(b), out=out), out)
        self.assertLess(np.abs(self.to_host(out) - expected).max() / np.abs(expected).max(), 1e-5)

    def test_module_matmul_through_dlpack(self):
        np = self.np

        class OnlyDLPack:  # an array of a framework fastgemm knows nothing of
            def __init__(self, array):
                self.array = array

            def __dlpack__(self, stream=None):
                return self.array.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return self.array.__dlpack_device__()

        a, b = self.random(130, 70), self.random(70, 90)
        out = self.to_device(np.full((130, 90), np.nan, np.float32))
        fastgemm.matmul(OnlyDLPack(self.to_device(a)), OnlyDLPack(self.to_device(b)), out=OnlyDLPack(out))
        expected = a.astype(np.float64) @ b.astype(np.float64)
        self.assertLess(np.abs(self.to_host(out) - expected).max() / np.abs(expected).max(), 1e-5)

    def test_sgemm_row_major(self):
        m, n, k, alpha, beta = 67, 45, 33, 1.5, -0.5
        a, b, c = self.random(m, k), self.random(k, n), self.random(m, n)
        d_a, d_b, d_c = self.to_device(a), self.to_device(b), self.to_device(c)
        self.handle.sgemm(Layout.ROW_MAJOR, Op.N, Op.N, m, n, k, alpha, d_a, k, d_b, n, beta, d_c, n)
        self.assert_close(self.to_host(d_c), alpha * a.astype("f8") @ b + beta * c, 1e-5)

    def test_sgemm_column_major_transposed_padded(self):
        # Column-major C (m x n, ldc m) is the row-major buffer C^T; op(A) = A^T with A column-major k x m
        # and lda = k + 3 is the row-major buffer a_rows[:, :k]; B column-major k x n is b_rows^T.
        m, n, k, alpha = 30, 50, 70, 2.0
        a_rows, b_rows = self.random(m, k + 3), self.random(n, k)
        d_a, d_b = self.to_device(a_rows), self.to_device(b_rows)
        d_c = self.to_device(self.np.full((n, m), self.np.nan, "float32"))
        self.handle.sgemm(Layout.COL_MAJOR, Op.T, Op.N, m, n, k, alpha, d_a, k + 3, d_b, k, 0.0, d_c, m)
        expected = alpha * a_rows[:, :k].astype("f8") @ b_rows.T
        self.assert_close(self.to_host(d_c).T, expected, 1e-5)

    def test_sgemm_strided_batched_broadcast(self):
        m, n, k, batches = 20, 24, 28, 3
        a, b = self.random(m, k), self.random(batches, k, n)
        d_a, d_b = self.to_device(a), self.to_device(b)
        d_c = self.to_device(self.np.zeros((batches, m, n), "float32"))
        self.handle.sgemm_strided_batched(Layout.ROW_MAJOR, Op.N, Op.N, m, n, k, 1.0, d_a, k, 0, d_b, n, k * n, 0.0,
                                          d_c, n, m * n, batches)
        self.assert_close(self.to_host(d_c), a.astype("f8") @ b, 1e-5)

    def test_matmul_with_a_transposed_view(self):
        m, n, k = 65, 31, 47
        a, b_t, c = self.random(m, k), self.random(n, k), self.random(m, n)
        d_c = self.to_device(c)
        result = self.handle.matmul(self.to_device(a), self.to_device(b_t).T, d_c, alpha=0.5, beta=2.0)
        self.assertIs(result, d_c)
        self.assert_close(self.to_host(d_c), 0.5 * a.astype("f8") @ b_t.T + 2.0 * c, 1e-5)
        with self.assertRaises(ValueError):
            self.handle.matmul(self.to_device(a), self.to_device(a), d_c)

    def rowmean_reference(self, data, matrix):
        return matrix.astype("f8") @ data.astype("f8").mean(axis=2).T

    def test_rowmean_matvec(self):
        N, L, M = 5, 37, 29
        for dtype, tolerance in (("float64", 1e-12), ("float32", 1e-5)):
            data, matrix = self.random(N, L, M, dtype=dtype), self.random(L, L, dtype=dtype)
            d_data, d_matrix = self.to_device(data), self.to_device(matrix)
            d_output = self.to_device(self.np.zeros((L, N), dtype))
            with self.subTest(dtype, call="rowmean_matvec"):
                kind = DType.F64 if dtype == "float64" else DType.F32
                self.handle.rowmean_matvec(kind, d_data, d_matrix, d_output, L, M, N)
                self.assert_close(self.to_host(d_output), self.rowmean_reference(data, matrix), tolerance)
            with self.subTest(dtype, call="rowmean_matvec_arrays"):
                d_output = self.to_device(self.np.zeros((L, N), dtype))
                self.handle.rowmean_matvec_arrays(d_data, d_matrix, d_output)
                self.assert_close(self.to_host(d_output), self.rowmean_reference(data, matrix), tolerance)

    def test_algorithms(self):
        self.assertIs(self.handle.sgemm_algo, SgemmAlgo.AUTO)
        self.assertIs(self.handle.last_sgemm_algo, SgemmAlgo.AUTO)
        a = self.to_device(self.random(64, 64))
        c = self.to_device(self.np.zeros((64, 64), "float32"))
        self.handle.sgemm_algo = SgemmAlgo.NAIVE
        self.assertIs(self.handle.sgemm_algo, SgemmAlgo.NAIVE)
        self.handle.matmul(a, a, c)
        self.assertIs(self.handle.last_sgemm_algo, SgemmAlgo.NAIVE)
        self.handle.sgemm_algo = SgemmAlgo.AUTO
        self.handle.matmul(a, a, c)
        self.assertIsNot(self.handle.last_sgemm_algo, SgemmAlgo.AUTO)
        self.handle.rowmean_algo = RowmeanAlgo.TWO_PASS
        self.assertIs(self.handle.rowmean_algo, RowmeanAlgo.TWO_PASS)
        with self.assertRaises(Error) as caught:
            self.handle.rowmean_algo = -1
        self.assertIs(caught.exception.status, Status.INVALID_VALUE)
        self.assertIs(self.handle.rowmean_algo, RowmeanAlgo.TWO_PASS)
        self.assertIs(self.handle.last_rowmean_algo, RowmeanAlgo.AUTO)
        L, M, N = 8, 16, 4
        data = self.to_device(self.random(N, L, M))
        matrix = self.to_device(self.random(L, L))
        output = self.to_device(self.np.zeros((L, N), "float32"))
        self.handle.rowmean_matvec(DType.F32, data, matrix, output, L, M, N)
        self.assertIs(self.handle.last_rowmean_algo, RowmeanAlgo.TWO_PASS)
        self.handle.rowmean_algo = RowmeanAlgo.AUTO
        self.handle.rowmean_matvec(DType.F32, data, matrix, output, L, M, N)
        self.assertIsNot(self.handle.last_rowmean_algo, RowmeanAlgo.AUTO)

    def test_math_mode(self):
        with mock.patch.dict(os.environ):
            os.environ.pop("FASTGEMM_MATH", None)
            handle = fastgemm.Handle()
        self.addCleanup(handle.close)
        self.assertIs(handle.math_mode, MathMode.FP32)
        handle.math_mode = MathMode.FP32_EMULATED
        self.assertIs(handle.math_mode, MathMode.FP32_EMULATED)
        with self.assertRaises(Error) as caught:
            handle.math_mode = 2
        self.assertIs(caught.exception.status, Status.INVALID_VALUE)
        self.assertIn("fg_set_math_mode: mode = 2", caught.exception.message)
        self.assertIs(handle.math_mode, MathMode.FP32_EMULATED)
        # In this mode AUTO runs an emulating algorithm or plain FP32, with FP32's accuracy either way.
        m, n, k = 96, 80, 2048
        a, b = self.random(m, k), self.random(k, n)
        d_c = self.to_device(self.np.full((m, n), self.np.nan, "float32"))
        handle.matmul(self.to_device(a), self.to_device(b), d_c)
        self.assert_close(self.to_host(d_c), a.astype("f8") @ b, 1e-5)
        self.assertIsNot(handle.last_sgemm_algo, SgemmAlgo.AUTO)
        # Forced, the emulating algorithm is refused by a build without it, and otherwise runs the product or
        # declines it.
        if fastgemm.sgemm_algo_name(SgemmAlgo.OZAKI_INT8) == "unknown":
            with self.assertRaises(Error) as caught:
                handle.sgemm_algo = SgemmAlgo.OZAKI_INT8
            self.assertIs(caught.exception.status, Status.NOT_SUPPORTED)
        else:
            handle.sgemm_algo = SgemmAlgo.OZAKI_INT8
            d_c = self.to_device(self.np.full((m, n), self.np.nan, "float32"))
            try:
                handle.matmul(self.to_device(a), self.to_device(b), d_c)
            except Error as error:
                self.assertIs(error.status, Status.NOT_SUPPORTED)
            else:
                self.assert_close(self.to_host(d_c), a.astype("f8") @ b, 1e-5)
                self.assertIs(handle.last_sgemm_algo, SgemmAlgo.OZAKI_INT8)

    def test_reproducibility(self):
        with mock.patch.dict(os.environ):
            os.environ.pop("FASTGEMM_REPRODUCIBLE", None)
            handle = fastgemm.Handle()
        self.addCleanup(handle.close)
        self.assertIs(handle.reproducibility, Reproducibility.RUN)
        handle.reproducibility = Reproducibility.SHAPE
        self.assertIs(handle.reproducibility, Reproducibility.SHAPE)
        with self.assertRaises(Error) as caught:
            handle.reproducibility = 2
        self.assertIs(caught.exception.status, Status.INVALID_VALUE)
        self.assertIn("fg_set_reproducibility: level = 2", caught.exception.message)
        self.assertIs(handle.reproducibility, Reproducibility.SHAPE)
        # A block of rows and columns computed alone is bitwise the same block of the whole product.
        m, n, k = 300, 260, 777
        a, b = self.random(m, k), self.random(k, n)
        d_c = self.to_device(self.np.full((m, n), self.np.nan, "float32"))
        handle.matmul(self.to_device(a), self.to_device(b), d_c)
        whole = self.to_host(d_c)
        # FP32 sums of k products, in any order: |error| <= k u / (1 - k u) * (|a| @ |b|), u = 2^-24.
        np = self.np
        u = 2.0 ** -24
        bound = k * u / (1 - k * u) * (np.abs(a).astype("f8") @ np.abs(b).astype("f8"))
        self.assertTrue(np.all(np.abs(whole - a.astype("f8") @ b) <= bound))
        rows, cols = slice(37, 70), slice(101, 118)
        d_block = self.to_device(self.np.full((33, 17), self.np.nan, "float32"))
        handle.matmul(self.to_device(self.np.ascontiguousarray(a[rows])),
                      self.to_device(self.np.ascontiguousarray(b[:, cols])), d_block)
        self.assertEqual(self.to_host(d_block).tobytes(), self.np.ascontiguousarray(whole[rows, cols]).tobytes())

    def test_reproducible_variable(self):
        with mock.patch.dict(os.environ, {"FASTGEMM_REPRODUCIBLE": "shape"}):
            shape = fastgemm.Handle()
            os.environ["FASTGEMM_REPRODUCIBLE"] = "run"
            run = fastgemm.Handle()
        self.addCleanup(shape.close)
        self.addCleanup(run.close)
        self.assertIs(shape.reproducibility, Reproducibility.SHAPE)
        self.assertIs(run.reproducibility, Reproducibility.RUN)

    def test_math_variable(self):
        with mock.patch.dict(os.environ, {"FASTGEMM_MATH": "fp32_emulated"}):
            emulated = fastgemm.Handle()
            os.environ["FASTGEMM_MATH"] = "fp32"
            plain = fastgemm.Handle()
        self.addCleanup(emulated.close)
        self.addCleanup(plain.close)
        # Read by each fg_create: a handle keeps the mode it was made with.
        self.assertIs(emulated.math_mode, MathMode.FP32_EMULATED)
        self.assertIs(plain.math_mode, MathMode.FP32)

    def test_stream(self):
        self.assertIsNone(self.handle.stream)
        stream = self.new_stream()
        self.handle.stream = stream
        self.assertEqual(self.handle.stream, self.stream_address(stream))
        a = self.random(40, 40)
        d_a = self.to_device(a)
        d_c = self.to_device(self.np.zeros((40, 40), "float32"))
        self.synchronize()
        self.handle.matmul(d_a, d_a, d_c)
        stream.synchronize()
        self.assert_close(self.to_host(d_c), a.astype("f8") @ a, 1e-5)
        self.handle.stream = None
        self.assertIsNone(self.handle.stream)

    def test_errors(self):
        a = self.to_device(self.random(16, 16))
        with self.assertRaises(Error) as caught:
            self.handle.sgemm(Layout.ROW_MAJOR, Op.N, Op.N, 16, 16, 16, 1.0, a, 3, a, 16, 0.0, a, 16)
        self.assertIs(caught.exception.status, Status.INVALID_VALUE)
        self.assertIn("lda = 3", caught.exception.message)
        with self.assertRaises(TypeError):
            self.handle.sgemm(Layout.ROW_MAJOR, Op.N, Op.N, 1, 1, 1, 1.0, object(), 1, a, 1, 0.0, a, 1)
        with self.assertRaises(ValueError):
            self.handle.matmul(self.to_device(self.random(4, 4, dtype="float64")), a, a)
        with fastgemm.Handle() as handle:
            self.assertIsNotNone(handle.pointer)
        self.assertIsNone(handle.pointer)
        with self.assertRaises(Error) as caught:
            handle.matmul(a, a, a)
        self.assertIs(caught.exception.status, Status.INVALID_HANDLE)
        handle.close()


class CupyTest(Backend, unittest.TestCase):
    name = "cupy"

    def to_device(self, array):
        return self.xp.asarray(array)

    def to_host(self, array):
        return self.xp.asnumpy(array)

    def synchronize(self):
        self.xp.cuda.runtime.deviceSynchronize()

    def new_stream(self):
        return self.xp.cuda.Stream(non_blocking=True)

    def stream_address(self, stream):
        return stream.ptr

    def test_docs_example(self):
        examples = [block for block in python_examples() if "import cupy" in block]
        self.assertEqual(len(examples), 1, "docs/python.md has no CuPy example")
        exec(compile(examples[0], "docs/python.md", "exec"), {})


class TorchTest(Backend, unittest.TestCase):
    name = "torch"

    def to_device(self, array):
        return self.xp.from_numpy(array).cuda()

    def to_host(self, tensor):
        return tensor.cpu().numpy()

    def synchronize(self):
        self.xp.cuda.synchronize()

    def new_stream(self):
        return self.xp.cuda.Stream()

    def stream_address(self, stream):
        return stream.cuda_stream

    def test_host_tensor_is_refused(self):
        host = self.xp.zeros(8, 8)
        with self.assertRaises(Error) as caught:
            self.handle.matmul(host, host, host)
        self.assertIs(caught.exception.status, Status.INVALID_VALUE)


if __name__ == "__main__":
    unittest.main(verbosity=2)
