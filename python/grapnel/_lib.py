"""ctypes declarations of grapnel's public C API (ABI mode: no compiler needed).

The shared library is looked for, in order:

1. the ``GRAPNEL_LIB`` environment variable (a file, or a directory holding
   ``libgrapnel.so.0`` / ``libgrapnel.so``): an explicit choice, nothing else
   is tried;
2. the package's own copy, ``grapnel/libgrapnel.so.0``, which ``pip install
   ./python`` builds and installs (python/pyproject.toml);
3. the system loader (``libgrapnel.so.0``, as found through ``LD_LIBRARY_PATH``
   and ``ld.so.cache``);
4. the ``libdir`` pkg-config reports for ``grapnel`` (``PKG_CONFIG_PATH``).

The library finds its CUDA backend module (``libgrapnel_cuda.so``) next to
itself when a session asks for backend "cuda"; ``cli_path()`` finds the
grapnel command that goes with the library.

Functions that other parts of the library add later (SavedModel signatures,
freezing, SavedModel saving) are bound only when the library exports them;
``has(name)`` tells.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_int32,
                    c_int64, c_size_t, c_uint32, c_uint64, c_void_p)
from typing import List, Optional

_NAMES = ("libgrapnel.so.0", "libgrapnel.so")

GN_TENSOR_MAX_DIMS = 8
#: Bytes reserved for a gn_options (its real size is read back from struct_size).
OPTIONS_BUF = 64 * 1024

GN_OK = 0


class LibraryNotFound(OSError):
    """The grapnel shared library could not be found."""


def _candidates() -> List[str]:
    out: List[str] = []
    env = os.environ.get("GRAPNEL_LIB")
    if env:
        if os.path.isdir(env):
            out += [os.path.join(env, n) for n in _NAMES]
        else:
            out.append(env)
        return out   # an explicit choice is not second-guessed
    here = os.path.dirname(os.path.abspath(__file__))
    out += [os.path.join(here, n) for n in _NAMES]
    out += list(_NAMES)   # the system loader
    pc = shutil.which("pkg-config")
    if pc:
        try:
            libdir = subprocess.run([pc, "--variable=libdir", "grapnel"], capture_output=True, text=True,
                                    timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            out += [os.path.normpath(os.path.join(libdir, n)) for n in _NAMES]
    return out


def _load() -> ctypes.CDLL:
    tried = []
    for c in _candidates():
        if os.sep in c and not os.path.exists(c):
            tried.append(c + " (absent)")
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            tried.append(f"{c} ({e})")
    raise LibraryNotFound("grapnel: cannot load the grapnel shared library; set GRAPNEL_LIB to its path. Tried: "
                          + "; ".join(tried))


lib = _load()

#: The path the library was loaded from (as given to the loader).
path: str = lib._name


def cli_path() -> Optional[str]:
    """The grapnel command that goes with the loaded library: the package's
    ``grapnel/bin/grapnel``, else ``grapnel`` in the library's directory (a
    build directory) or in ``../bin`` (an installed prefix), else the one on
    ``PATH``; None when there is none."""
    here = os.path.dirname(os.path.abspath(__file__))
    libdir = os.path.dirname(os.path.abspath(path)) if os.sep in path else ""
    cands = [os.path.join(here, "bin", "grapnel")]
    if libdir:
        cands += [os.path.join(libdir, "grapnel"), os.path.join(libdir, os.pardir, "bin", "grapnel")]
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.normpath(c)
    return shutil.which("grapnel")


def has(name: str) -> bool:
    """Whether the loaded library exports the C function ``name``."""
    try:
        getattr(lib, name)
        return True
    except AttributeError:
        return False


# ---- structures -------------------------------------------------------------------------------------
class gn_load_options(Structure):
    _fields_ = [("struct_size", c_uint32), ("format", c_int32), ("tags", c_char_p), ("validate", c_int32)]


class gn_string(Structure):
    _fields_ = [("data", c_void_p), ("len", c_size_t)]


class gn_tensor(Structure):
    _fields_ = [("dtype", c_int32), ("rank", c_int32), ("dims", c_int64 * GN_TENSOR_MAX_DIMS), ("data", c_void_p),
                ("nbytes", c_size_t), ("internal", c_void_p)]


class gn_session_options(Structure):
    _fields_ = [("struct_size", c_uint32), ("backend", c_char_p), ("seed", c_uint64), ("num_threads", c_int32),
                ("workspace_limit_bytes", c_uint64), ("cuda_graph", c_bool),
                # resource bounds (0: the library's defaults; docs/hardening.md)
                ("memory_limit_bytes", c_uint64), ("step_limit", c_uint64), ("time_limit_ms", c_uint64)]


class gn_compare_result(Structure):
    _fields_ = [("match", c_int32), ("max_abs_err", c_double), ("rel_l2_err", c_double), ("tol", c_double),
                ("n_diff", c_int64), ("n_nan_mismatch", c_int64), ("why", c_char * 256)]


class gn_target(Structure):
    _fields_ = [("kind", c_int32), ("compute_capability", c_int32), ("num_gpus", c_int32)]


class gn_optimize_params(Structure):
    _fields_ = [("struct_size", c_uint32), ("fetches", POINTER(c_char_p)), ("n_fetches", c_size_t),
                ("feeds", POINTER(c_char_p)), ("n_feeds", c_size_t), ("custom_passes", c_void_p),
                ("n_custom_passes", c_size_t), ("dump_dir", c_char_p), ("target", gn_target),
                ("no_report_events", c_bool)]


class gn_html_params(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_int32), ("title", c_char_p), ("report", c_void_p),
                ("segment_report", c_char_p), ("bisect_pass", c_char_p)]


class gn_signature_arg(Structure):
    _fields_ = [("key", c_char_p), ("tensor", c_char_p), ("dtype", c_int32), ("rank", c_int32),
                ("dims", c_int64 * 8)]


class gn_variable_info(Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int32), ("rank", c_int32), ("dims", c_int64 * 8),
                ("bytes", c_uint64)]


class gn_save_params(Structure):
    _fields_ = [("struct_size", c_uint32), ("n_feeds", c_size_t), ("feeds", POINTER(c_char_p)),
                ("n_fetches", c_size_t), ("fetches", POINTER(c_char_p)), ("signature_key", c_char_p),
                ("tags", c_char_p)]


class gn_conversion_params(Structure):
    _fields_ = [("struct_size", c_uint32), ("max_workspace_size_bytes", c_int64), ("precision_mode", c_int32),
                ("minimum_segment_size", c_int32), ("maximum_cached_engines", c_int32),
                ("use_calibration", c_int32), ("allow_build_at_runtime", c_int32)]


class gn_segment_params(Structure):
    _fields_ = [("struct_size", c_uint32), ("backend", c_char_p), ("preserve", POINTER(c_char_p)),
                ("n_preserve", c_size_t), ("dry_run", c_int32)]


#: Bytes reserved for a gn_save_options (its real size is read back from struct_size).
SAVE_OPTIONS_BUF = 4096

# ---- prototypes -------------------------------------------------------------------------------------
_P = c_void_p   # opaque handles
_S = c_int32    # gn_status


def _decl(name: str, restype, *argtypes, optional: bool = False) -> None:
    try:
        f = getattr(lib, name)
    except AttributeError:
        if optional:
            return
        raise
    f.restype = restype
    f.argtypes = list(argtypes)


_decl("gn_version", c_char_p)
_decl("gn_status_str", c_char_p, _S)
_decl("gn_free", None, c_void_p)
# graph
_decl("gn_load_options_init", None, POINTER(gn_load_options))
_decl("gn_graph_load", _S, c_char_p, POINTER(gn_load_options), POINTER(_P))
_decl("gn_graph_load_buffer", _S, c_void_p, c_size_t, c_char_p, POINTER(gn_load_options), POINTER(_P))
_decl("gn_graph_save", _S, _P, c_char_p, c_int32)
_decl("gn_graph_set_fsync", None, _P, c_int32)
_decl("gn_graph_serialize", _S, _P, c_int32, POINTER(c_void_p), POINTER(c_size_t))
_decl("gn_graph_free", None, _P)
_decl("gn_graph_errmsg", c_char_p, _P)
_decl("gn_graph_errcode", _S, _P)
_decl("gn_graph_clone", _S, _P, POINTER(_P))
_decl("gn_graph_validate", _S, _P)
_decl("gn_graph_infer_shapes", _S, _P)
_decl("gn_graph_node_count", c_size_t, _P)
_decl("gn_graph_node_name", c_char_p, _P, c_size_t)
_decl("gn_graph_node_op", c_char_p, _P, c_size_t)
_decl("gn_graph_node_device", c_char_p, _P, c_size_t)
_decl("gn_graph_node_input_count", c_size_t, _P, c_size_t)
_decl("gn_graph_node_input", _S, _P, c_size_t, c_size_t, c_char_p, c_size_t)
_decl("gn_graph_node_output_count", c_int32, _P, c_size_t)
_decl("gn_graph_node_output_dtype", c_int32, _P, c_size_t, c_int32)
_decl("gn_graph_node_output_shape", c_int32, _P, c_size_t, c_int32, POINTER(c_int64), c_int32)
_decl("gn_graph_function_count", c_size_t, _P)
_decl("gn_graph_function_name", c_char_p, _P, c_size_t)
_decl("gn_graph_function_node_count", c_size_t, _P, c_size_t)
_decl("gn_dtype_name", c_char_p, c_int32)
_decl("gn_graph_inspect", _S, _P, c_uint32, POINTER(c_void_p))
_decl("gn_graph_to_dot", _S, _P, POINTER(c_void_p))
# runtime
_decl("gn_tensor_free", None, POINTER(gn_tensor))
_decl("gn_tensor_numel", c_int64, POINTER(gn_tensor))
_decl("gn_dtype_size", c_size_t, c_int32)
_decl("gn_session_options_init", None, POINTER(gn_session_options))
_decl("gn_session_new", _S, _P, POINTER(gn_session_options), POINTER(_P))
_decl("gn_session_run", _S, _P, POINTER(c_char_p), POINTER(gn_tensor), c_size_t, POINTER(c_char_p),
      POINTER(gn_tensor), c_size_t)
_decl("gn_session_errmsg", c_char_p, _P)
_decl("gn_session_free", None, _P)
_decl("gn_dtype_numpy_name", c_char_p, c_int32)
_decl("gn_tensor_compare", _S, POINTER(gn_tensor), POINTER(gn_tensor), c_double, POINTER(gn_compare_result))
_decl("gn_compare_default_tol", c_double, c_int32)
# options
_decl("gn_options_init", None, c_void_p)
_decl("gn_options_parse", _S, c_void_p, c_char_p, c_char_p, c_size_t)
_decl("gn_options_set", _S, c_void_p, c_char_p, c_char_p, c_char_p, c_size_t)
_decl("gn_options_get", _S, c_void_p, c_char_p, c_char_p, c_size_t)
_decl("gn_options_to_string", _S, c_void_p, POINTER(c_void_p))
_decl("gn_options_key_count", c_size_t)
_decl("gn_options_key", c_char_p, c_size_t)
_decl("gn_options_key_help", c_char_p, c_size_t)
# optimizer
_decl("gn_target_parse", _S, c_char_p, POINTER(gn_target), c_char_p, c_size_t)
_decl("gn_target_to_string", None, POINTER(gn_target), c_char_p, c_size_t)
_decl("gn_optimize_params_init", None, POINTER(gn_optimize_params))
_decl("gn_optimize", _S, _P, c_void_p, POINTER(gn_optimize_params), POINTER(_P))
_decl("gn_report_free", None, _P)
_decl("gn_report_to_text", _S, _P, POINTER(c_void_p))
_decl("gn_report_to_json", _S, _P, POINTER(c_void_p))
_decl("gn_optimizer_list_passes", _S, POINTER(c_void_p))
# the HTML report (report_html.h)
_decl("gn_html_params_init", None, POINTER(gn_html_params))
_decl("gn_report_write_html", _S, _P, _P, POINTER(gn_html_params), c_char_p, c_char_p, c_size_t)
# SavedModel (savedmodel.h): bound when exported
_decl("gn_graph_tags", c_char_p, _P, optional=True)
_decl("gn_graph_signature_count", c_size_t, _P, optional=True)
_decl("gn_graph_signature_key", c_char_p, _P, c_size_t, optional=True)
_decl("gn_graph_signature_method", c_char_p, _P, c_char_p, optional=True)
_decl("gn_graph_signature_args", _S, _P, c_char_p, c_int32, POINTER(c_size_t), optional=True)
_decl("gn_graph_signature_arg", _S, _P, c_char_p, c_int32, c_size_t, POINTER(gn_signature_arg), optional=True)
_decl("gn_graph_variable_count", _S, _P, POINTER(c_size_t), optional=True)
_decl("gn_graph_variable", _S, _P, c_size_t, POINTER(gn_variable_info), optional=True)
_decl("gn_graph_freeze", _S, _P, c_char_p, POINTER(_P), optional=True)
_decl("gn_graph_asset_count", c_size_t, _P, optional=True)
_decl("gn_graph_asset_filename", c_char_p, _P, c_size_t, optional=True)
_decl("gn_graph_asset_tensor", c_char_p, _P, c_size_t, optional=True)
# engine conversion (convert.h): bound when exported
_decl("gn_conversion_params_init", None, POINTER(gn_conversion_params), optional=True)
_decl("gn_conversion_params_parse", _S, POINTER(gn_conversion_params), c_char_p, c_char_p, c_size_t, optional=True)
_decl("gn_conversion_params_to_string", _S, POINTER(gn_conversion_params), POINTER(c_void_p), optional=True)
_decl("gn_segment_params_init", None, POINTER(gn_segment_params), optional=True)
_decl("gn_segment", _S, _P, POINTER(gn_conversion_params), POINTER(gn_segment_params), POINTER(c_void_p),
      POINTER(c_size_t), optional=True)
_decl("gn_calibrate", _S, _P, POINTER(c_char_p), c_size_t, POINTER(gn_tensor), c_size_t, POINTER(c_void_p),
      optional=True)
# SavedModel writing (save.h): bound when exported
_decl("gn_save_options_init", None, c_void_p, optional=True)
_decl("gn_save_options_parse", _S, c_void_p, c_char_p, c_char_p, c_size_t, optional=True)
_decl("gn_save_options_clear", None, c_void_p, optional=True)
_decl("gn_save_options_to_string", c_void_p, c_void_p, optional=True)
_decl("gn_save_params_init", None, POINTER(gn_save_params), optional=True)
_decl("gn_savedmodel_save", _S, _P, c_char_p, c_void_p, POINTER(gn_save_params), optional=True)


def take_string(p: Optional[int]) -> str:
    """Copies a library-owned NUL-terminated string and releases it with gn_free."""
    if not p:
        return ""
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.gn_free(p)


def status_str(code: int) -> str:
    return lib.gn_status_str(code).decode()


def s(b: Optional[bytes]) -> str:
    """bytes from the library (borrowed) to str; None to ""."""
    return b.decode("utf-8", "replace") if b else ""
