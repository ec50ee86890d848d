# SPDX-License-Identifier: Apache-2.0
"""The Fortran module and the Python module bind exactly the header's functions, with its argument and
return types, and carry its enumerators with its values.

    python3 check_bindings.py fastgemm.h fastgemm.f90 fastgemm.py

A function or an enumerator added to the header fails this check until both bindings have it.
"""
import ctypes
import importlib.util
import re
import sys

# ctypes type -> the kind of value it passes; "out" marks a pointer the callee writes through.
PYTHON_KINDS = {
    ctypes.c_int: "int", ctypes.c_int64: "int64", ctypes.c_float: "float", ctypes.c_void_p: "pointer",
    ctypes.c_size_t: "size", ctypes.POINTER(ctypes.c_size_t): "size out",
    ctypes.c_char_p: "string", ctypes.POINTER(ctypes.c_int): "int out", ctypes.POINTER(ctypes.c_int64): "int64 out",
    ctypes.POINTER(ctypes.c_void_p): "pointer out",
}
FORTRAN_KINDS = {"integer(c_int)": "int", "integer(c_int64_t)": "int64", "integer(c_size_t)": "size", "real(c_float)": "float",
                 "type(c_ptr)": "pointer"}
# Python's enumeration classes and the prefix that turns a member's name into the header's.
PYTHON_ENUMS = {"fg_status_t": ("Status", "FG_STATUS_"), "fg_layout_t": ("Layout", "FG_"), "fg_op_t": ("Op", "FG_OP_"),
                "fg_sgemm_algo_t": ("SgemmAlgo", "FG_SGEMM_"), "fg_math_mode_t": ("MathMode", "FG_MATH_"),
                "fg_dtype_t": ("DType", "FG_"), "fg_reproducibility_t": ("Reproducibility", "FG_REPRODUCIBLE_"),
                "fg_rowmean_algo_t": ("RowmeanAlgo", "FG_ROWMEAN_")}
POINTER_TYPES = ("fg_handle_t", "cudaStream_t")

failures = []


def fail(message):
    failures.append(message)


def c_kind(declaration):
    """The kind of a C parameter or return type: "int64_t m" -> "int64", "fg_sgemm_algo_t *algo" and
    "const int *devices" -> "int out"."""
    text = re.sub(r"\bconst\b", "", declaration).strip()
    stars = text.count("*")
    base = text.replace("*", " ").split()[0]
    if stars == 0:
        if base in POINTER_TYPES:
            return "pointer"
        return {"int64_t": "int64", "size_t": "size", "float": "float", "int": "int"}.get(base, "int" if base.endswith("_t") else base)
    if base == "char":
        return "string"
    if base in POINTER_TYPES:
        return "pointer out"
    if base == "size_t":
        return "size out"
    if base == "int64_t":
        return "int64 out"
    return "int out" if base == "int" or re.fullmatch(r"fg_\w+_t", base) else "pointer"


def parse_header(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    functions = {}
    for returns, name, parameters in re.findall(r"FG_API\s+([^;(]*?)\s*\b(fg_\w+)\s*\(([^)]*)\)\s*;", text):
        parameters = [p.strip() for p in parameters.split(",") if p.strip() not in ("", "void")]
        # A parameter's name is its last word; what is left is its type.
        kinds = [c_kind(re.sub(r"\w+$", "", p)) for p in parameters]
        functions[name] = (c_kind(returns.replace("FG_API", "")), kinds)
    enums = {}
    for type_name, body in re.findall(r"typedef enum (fg_\w+_t)\s*\{(.*?)\}", text, re.S):
        enums[type_name] = {name: int(value) for name, value in re.findall(r"(FG_\w+)\s*=\s*(-?\d+)", body)}
    version = dict(re.findall(r"#define (FG_VERSION_(?:MAJOR|MINOR|PATCH)) (\d+)", text))
    return functions, enums, version


def parse_fortran(text):
    text = re.sub(r"!.*", "", text)
    text = re.sub(r"&\s*\n\s*", " ", text)
    functions = {}
    for header, body in re.findall(r"^\s*(function [^\n]*bind\(C[^\n]*)\n(.*?)^\s*end function", text, re.M | re.S):
        match = re.match(r'function \w+\(([^)]*)\)\s*bind\(C, name="(\w+)"\)\s*result\((\w+)\)', header)
        if not match:
            fail(f"fastgemm.f90: cannot read the interface '{header.strip()}'")
            continue
        arguments, c_name, result = match.groups()
        kinds = {}
        declarations = re.findall(r"^\s*(\w+\(\w+\))\s*((?:,\s*[\w()*]+)*)\s*::\s*(.*)$", body, re.M)
        for type_text, attributes, names in declarations:
            kind = FORTRAN_KINDS.get(type_text.lower(), type_text)
            if "value" not in attributes.lower():
                kind += " out"
            for name in names.split(","):
                kinds[name.strip().lower()] = kind
        names = [a.strip().lower() for a in arguments.split(",") if a.strip()]
        returns = kinds.get(result.lower(), "?").replace(" out", "")
        functions.setdefault(c_name, []).append((returns, [kinds.get(n, "?") for n in names]))
    enumerators = {name.upper(): int(value)
                   for name, value in re.findall(r"enumerator\s*::\s*(\w+)\s*=\s*(-?\d+)", text, re.I)}
    parameters = {name.upper(): value
                  for name, value in re.findall(r"parameter\s*::\s*(FG_VERSION_\w+)\s*=\s*(\d+)", text, re.I)}
    return functions, enumerators, parameters


def check_fortran(path, functions, enums, version):
    bound, enumerators, parameters = parse_fortran(open(path).read())
    for name, (returns, kinds) in functions.items():
        interfaces = bound.get(name, [])
        if len(interfaces) != 1:
            fail(f"fastgemm.f90: {len(interfaces)} interfaces bound to {name}, expected one")
            continue
        # A C string comes back as type(c_ptr).
        expected = ("pointer" if returns == "string" else returns, kinds)
        if interfaces[0] != expected:
            fail(f"fastgemm.f90: {name} is bound as {interfaces[0]}, the header declares {expected}")
    for name in bound.keys() - functions.keys():
        if name.startswith("fg_"):
            fail(f"fastgemm.f90: {name} is bound but not in the header")
    header_enumerators = {name: value for values in enums.values() for name, value in values.items()}
    if enumerators != header_enumerators:
        fail(f"fastgemm.f90: enumerators differ from the header's: only in fastgemm.f90 "
             f"{sorted(enumerators.items() - header_enumerators.items())}, only in the header "
             f"{sorted(header_enumerators.items() - enumerators.items())}")
    if parameters != version:
        fail(f"fastgemm.f90: version parameters {parameters}, the header has {version}")


def check_python(path, functions, enums):
    spec = importlib.util.spec_from_file_location("fastgemm_under_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    prototypes = module._PROTOTYPES
    for name in functions.keys() ^ prototypes.keys():
        fail(f"fastgemm.py: {name} is {'missing' if name in functions else 'not in the header'}")
    for name in functions.keys() & prototypes.keys():
        restype, argtypes = prototypes[name]
        bound = (PYTHON_KINDS.get(restype, restype), [PYTHON_KINDS.get(t, t) for t in argtypes])
        if bound != functions[name]:
            fail(f"fastgemm.py: {name} is bound as {bound}, the header declares {functions[name]}")
    for type_name, values in enums.items():
        if type_name not in PYTHON_ENUMS:
            fail(f"fastgemm.py: no enumeration class for {type_name}")
            continue
        class_name, prefix = PYTHON_ENUMS[type_name]
        # __members__ holds the aliases too: a former name is a second member name of the same value.
        members = {prefix + name: int(member) for name, member in getattr(module, class_name).__members__.items()}
        if members != values:
            fail(f"fastgemm.py: {class_name} is {members}, the header's {type_name} is {values}")


def main(header, fortran, python):
    functions, enums, version = parse_header(open(header).read())
    if len(functions) < 15 or len(enums) < 5:
        fail(f"found only {len(functions)} functions and {len(enums)} enumerations in {header}")
    check_fortran(fortran, functions, enums, version)
    check_python(python, functions, enums)
    for message in failures:
        print(message)
    if failures:
        return 1
    print(f"fastgemm.f90 and fastgemm.py bind the header's {len(functions)} functions and "
          f"{sum(len(v) for v in enums.values())} enumerators")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
