"""grapnel: a Grappler-style optimizer for TensorFlow graphs, from Python.

A thin layer over the grapnel shared library (through ctypes: nothing to
compile at install time). Load a GraphDef (``.pb``/``.pbtxt``) or a SavedModel
directory, inspect it, optimize it with TensorFlow's optimizer options, run it
on the CPU reference backend with numpy arrays, compare two graphs, save it::

    import grapnel, numpy as np
    with grapnel.load("model.pb") as g:
        report = g.optimize({"constant_folding": True, "layout_optimizer": False})
        y, = g.run({"x": np.ones((1, 4), np.float32)}, ["y"])

Every failure raises :class:`grapnel.Error` carrying the library's message;
bad arguments are also ``ValueError`` (:class:`InvalidArgumentError`) and
missing files also ``FileNotFoundError`` (:class:`NotFoundError`).

At TensorFlow's level: ``grapnel.load(dir).signatures['serving_default'](x=...)``
returns a dict by output key (the SavedModel is frozen once, on first call);
TensorFlow's own objects (``tf.saved_model.SaveOptions``, ``VariablePolicy``,
``TrtConversionParams``, numpy scalars) are accepted wherever their
dictionaries are, read by attribute; :class:`Converter` follows
``TrtGraphConverterV2``'s convert / build / save / summary.
"""
from __future__ import annotations

import ast
import ctypes
import difflib
import errno as _errno
import json
import os
import re
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._lib import lib

__all__ = [
    "Error", "Graph", "load", "loads", "version", "library_path", "option_keys", "option_help",
    "default_options", "parse_options", "options_text", "list_passes", "DTYPES", "dtype_to_numpy",
    "dtype_from_numpy", "has_savedmodel", "has_savedmodel_save", "parse_save_options",
    "save_options_text", "conversion_params", "InvalidArgumentError", "NotFoundError", "SignatureFunction",
    "Converter", "ResourceExhaustedError", "NO_LIMIT",
]

# the library's version (include/grapnel/version.h, the one place it is written)
__version__ = lib.gn_version().decode()

# declared here (optional: an older library lacks them)
_lib._decl("gn_graph_default_signature", ctypes.c_char_p, ctypes.c_void_p, optional=True)
_lib._decl("gn_engines_build", ctypes.c_int32, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
           ctypes.POINTER(_lib.gn_tensor), ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p), optional=True)


_GN_ERR_ARG = 1
_GN_ERR_LIMIT = 11

#: A resource limit of Graph.run that bounds nothing (memory_limit_bytes,
#: step_limit): gn_session_options' UINT64_MAX.
NO_LIMIT = (1 << 64) - 1
_GN_ERR_IO = 4
_GN_ERR_NOT_FOUND = 9
_NO_SUCH_FILE = os.strerror(_errno.ENOENT)   # "No such file or directory", as the library writes it


class Error(Exception):
    """A grapnel call failed. ``str(e)`` is the library's message; ``code`` the
    gn_status number and ``status`` its text ("invalid argument", ...).

    ``Error(message, code)`` makes the subclass the code calls for: an invalid
    argument (code 1) is an :class:`InvalidArgumentError` (also a ValueError),
    a file that does not exist a :class:`NotFoundError` (also a
    FileNotFoundError), a run past one of its resource limits (code 11) a
    :class:`ResourceExhaustedError`; ``except grapnel.Error`` catches them all."""

    def __new__(cls, message: str = "", code: int = 1, report: Optional[dict] = None):
        if cls is Error:
            if code == _GN_ERR_ARG:
                cls = InvalidArgumentError
            elif code == _GN_ERR_IO and _NO_SUCH_FILE in message:
                cls = NotFoundError
            elif code == _GN_ERR_LIMIT:
                cls = ResourceExhaustedError
        return super().__new__(cls, message)

    def __init__(self, message: str, code: int = 1, report: Optional[dict] = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = _lib.status_str(code)
        #: for a failed optimize(): the per-pass record, as optimize() returns it
        self.report = report

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Any:
        return (Error, (self.message, self.code, self.report))


class InvalidArgumentError(Error, ValueError):
    """A bad argument: an unknown key (with the nearest one), a value of the
    wrong kind, a name the graph or signature lacks."""


class ResourceExhaustedError(Error):
    """A run went past one of its resource limits (Graph.run's memory_limit_bytes,
    step_limit, time_limit_ms, or their defaults); the message names the node."""


class NotFoundError(Error, FileNotFoundError):
    """A file or directory that does not exist; ``filename`` names it."""

    def __init__(self, message: str, code: int = _GN_ERR_IO, report: Optional[dict] = None):
        Error.__init__(self, message, code, report)
        self.errno = _errno.ENOENT
        self.strerror = message
        head = message.split(": " + _NO_SUCH_FILE)[0]
        self.filename = head.rsplit(": ", 1)[-1] if head != message else None


def version() -> str:
    """The library's version ("0.1.0")."""
    return lib.gn_version().decode()


#: The file the shared library was loaded from.
library_path: str = _lib.path

# ---- dtypes ---------------------------------------------------------------------------------------------
#: TensorFlow DataType number -> numpy dtype (DT_STRING maps to object arrays of bytes).
DTYPES: Dict[int, np.dtype] = {
    1: np.dtype(np.float32), 2: np.dtype(np.float64), 3: np.dtype(np.int32), 4: np.dtype(np.uint8),
    5: np.dtype(np.int16), 6: np.dtype(np.int8), 7: np.dtype(object), 8: np.dtype(np.complex64),
    9: np.dtype(np.int64), 10: np.dtype(np.bool_), 17: np.dtype(np.uint16), 18: np.dtype(np.complex128),
    19: np.dtype(np.float16), 22: np.dtype(np.uint32), 23: np.dtype(np.uint64),
}
_DT_STRING = 7
_DT_BFLOAT16 = 14
_FROM_NUMPY = {v: k for k, v in DTYPES.items() if k != _DT_STRING}


def dtype_to_numpy(dtype: int) -> np.dtype:
    """numpy dtype of a TensorFlow DataType number. bfloat16 (14), which numpy
    lacks, is widened to float32 on fetch and reported as float32 here."""
    if dtype == _DT_BFLOAT16:
        return np.dtype(np.float32)
    try:
        return DTYPES[dtype]
    except KeyError:
        raise Error(f"dtype {_lib.s(lib.gn_dtype_name(dtype)) or dtype} has no numpy equivalent", 7) from None


def dtype_from_numpy(dtype: Any) -> int:
    """TensorFlow DataType number of a numpy dtype (bytes, str and object: DT_STRING)."""
    dt = np.dtype(dtype)
    if dt.kind in "SUO":
        return _DT_STRING
    try:
        return _FROM_NUMPY[dt.newbyteorder("=")]
    except KeyError:
        raise Error(f"numpy dtype {dt} has no TensorFlow equivalent", 1) from None


class _Feed:
    """A numpy array seen as a gn_tensor (borrowed; keeps what it points to alive)."""

    def __init__(self, value: Any):
        arr = value if isinstance(value, np.ndarray) else np.asarray(value)
        if arr.ndim > _lib.GN_TENSOR_MAX_DIMS:
            raise Error(f"rank {arr.ndim} exceeds {_lib.GN_TENSOR_MAX_DIMS}", 1)
        t = _lib.gn_tensor()
        t.dtype = dtype_from_numpy(arr.dtype)
        t.rank = arr.ndim
        for i, d in enumerate(arr.shape):
            t.dims[i] = d
        if t.dtype == _DT_STRING:
            flat = [v if isinstance(v, bytes) else str(v).encode() for v in arr.reshape(-1).tolist()]
            strs = (_lib.gn_string * max(len(flat), 1))()
            self._keep: Any = (flat, strs)
            for i, b in enumerate(flat):
                strs[i].data = ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p)
                strs[i].len = len(b)
            t.data = ctypes.cast(strs, ctypes.c_void_p)
            t.nbytes = ctypes.sizeof(_lib.gn_string) * len(flat)
        else:
            arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
            self._keep = arr
            t.data = arr.ctypes.data if arr.size else None
            t.nbytes = arr.nbytes
        self.tensor = t


def _to_numpy(t: _lib.gn_tensor) -> np.ndarray:
    """Copies a library tensor into a new numpy array."""
    shape = tuple(t.dims[i] for i in range(t.rank))
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if t.dtype == _DT_STRING:
        out = np.empty(n, dtype=object)
        if n:
            strs = ctypes.cast(t.data, ctypes.POINTER(_lib.gn_string))
            for i in range(n):
                out[i] = ctypes.string_at(strs[i].data, strs[i].len) if strs[i].len else b""
        return out.reshape(shape)
    if t.dtype == _DT_BFLOAT16:
        raw = np.empty(n, dtype=np.uint16)
        if n:
            ctypes.memmove(raw.ctypes.data, t.data, raw.nbytes)
        return (raw.astype(np.uint32) << 16).view(np.float32).reshape(shape)
    out = np.empty(shape, dtype=dtype_to_numpy(t.dtype))
    if out.nbytes:
        if t.nbytes < out.nbytes:
            raise Error(f"tensor of {t.nbytes} bytes for {out.nbytes} expected", 10)
        ctypes.memmove(out.ctypes.data, t.data, out.nbytes)
    return out


# ---- options --------------------------------------------------------------------------------------------
def option_keys() -> List[str]:
    """Every option key: TensorFlow's experimental optimizer dictionary keys, the
    RewriterConfig-only fields, then grapnel's own dotted keys."""
    return [lib.gn_options_key(i).decode() for i in range(lib.gn_options_key_count())]


def option_help() -> Dict[str, str]:
    """Key -> one line on what it does here."""
    return {lib.gn_options_key(i).decode(): _lib.s(lib.gn_options_key_help(i))
            for i in range(lib.gn_options_key_count())}


def _plain(v: Any) -> Any:
    """TensorFlow's and numpy's objects as the plain Python values of the
    dictionaries, read by attribute (TensorFlow is never imported): numpy
    scalars and 0-d arrays; enums (VariablePolicy.SAVE_VARIABLE_DEVICES: its
    value); namedtuples (TrtConversionParams: a dict); sharding policies
    (MaxShardSizePolicy(N) as its call text); functions (their name)."""
    if v is None or isinstance(v, (bool, _Call)) or type(v) is str:
        return v
    if isinstance(v, str):      # np.str_ (whose repr under numpy 2 is "np.str_('...')")
        return str(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return _plain(v.item())
    if isinstance(v, Mapping):
        return {_plain(k): _plain(x) for k, x in v.items()}
    if hasattr(v, "_asdict") and hasattr(v, "_fields"):    # a namedtuple
        return {k: _plain(x) for k, x in v._asdict().items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_plain(x) for x in v]
    if hasattr(type(v), "__members__") and hasattr(v, "value") and hasattr(v, "name"):   # an Enum
        return _plain(v.value)
    name = type(v).__name__
    if name == "MaxShardSizePolicy" and hasattr(v, "max_shard_size"):
        return _Call(f"MaxShardSizePolicy({int(v.max_shard_size)})")
    if name == "ShardByTaskPolicy":
        return _Call("ShardByTaskPolicy()")
    for attr in ("name", "__name__"):                    # tf.function, a Python function
        n = getattr(v, attr, None)
        if isinstance(n, str) and callable(v):
            return n
    return v


class _Call(str):
    """A call in dictionary text (a sharding policy), written without quotes."""


def _object_fields(obj: Any, fields: Sequence[str]) -> Optional[Dict[str, Any]]:
    """An options object (tf.saved_model.SaveOptions, TrtConversionParams,
    an object with the same attributes) as a dict of its fields; None when obj
    is no such object."""
    if hasattr(obj, "_asdict") and hasattr(obj, "_fields"):
        return dict(obj._asdict())
    names = list(getattr(obj, "__slots__", ()) or ()) + list(getattr(obj, "__dict__", {}) or {})
    got = {k: getattr(obj, k) for k in names if k in fields and hasattr(obj, k)}
    return got or None


def _nearest(key: str, valid: Sequence[str]) -> Optional[str]:
    m = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.6)
    if m:
        return m[0]
    low = key.lower().replace("-", "_")
    for v in valid:
        if len(low) >= 3 and (low in v or v == low):
            return v
    return None


def _check_keys(d: Mapping[str, Any], valid: Sequence[str], what: str) -> None:
    """Raises InvalidArgumentError for a key not in valid, quoting it as given,
    with the nearest valid key."""
    for k in d:
        if not isinstance(k, str):
            raise Error(f"{what} key {k!r} is not a str", _GN_ERR_ARG)
        if k not in valid:
            near = _nearest(k, valid)
            hint = f"; did you mean '{near}'?" if near else ""
            raise Error(f"unknown {what} '{k}'{hint} (valid: {', '.join(valid)})", _GN_ERR_ARG)


def _text_keys(text: str) -> Optional[List[str]]:
    """The keys of dictionary text written by the user, when it reads as a Python dict."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Dict):
        return None
    keys = []
    for k in node.keys:
        if not isinstance(k, ast.Constant) or not isinstance(k.value, str):
            return None
        keys.append(k.value)
    return keys


def _py_value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _value_text(key: str, v: Any) -> str:
    v = _plain(v)
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (list, tuple)):   # lists of names for the comma-separated keys
        return repr(",".join(str(x) for x in v))
    raise Error(f"option '{key}': value {v!r} of type {type(v).__name__} is not a bool, int or str", 1)


def options_text(options: Union[Mapping[str, Any], str, None]) -> str:
    """The dictionary text gn_options_parse reads, from a dict such as
    ``{'constant_folding': True, 'min_graph_nodes': -1}`` (a str is passed through)."""
    if options is None:
        return "{}"
    if isinstance(options, str):
        return options
    if not isinstance(options, Mapping):
        raise Error(f"options must be a dict, not {type(options).__name__}", 1)
    options = {_plain(k): v for k, v in options.items()}
    parts = []
    for k, v in options.items():
        if not isinstance(k, str):
            raise Error(f"option key {k!r} is not a str", 1)
        parts.append(f"{k!r}: {_value_text(k, v)}")
    return "{" + ", ".join(parts) + "}"


class _Options:
    """A gn_options in a buffer owned here (its size read back from struct_size)."""

    def __init__(self, options: Union[Mapping[str, Any], str, None] = None):
        self.buf = ctypes.create_string_buffer(_lib.OPTIONS_BUF)
        lib.gn_options_init(self.buf)
        size = ctypes.c_uint32.from_buffer(self.buf).value
        if size > _lib.OPTIONS_BUF:
            raise Error(f"gn_options is {size} bytes, more than the {_lib.OPTIONS_BUF} reserved", 10)
        # kept alive: gn_options holds borrowed pointers into the parsed text
        self.text = options_text(options).encode()
        err = ctypes.create_string_buffer(2048)
        rc = lib.gn_options_parse(self.buf, self.text, err, len(err))
        if rc != _lib.GN_OK:
            raise Error(_lib.s(err.value) or _lib.status_str(rc), rc)

    def get(self, key: str) -> Any:
        val = ctypes.create_string_buffer(_OPT_VALUE_MAX)
        rc = lib.gn_options_get(self.buf, key.encode(), val, len(val))
        if rc != _lib.GN_OK:
            raise Error(f"option '{key}': {_lib.status_str(rc)}", rc)
        return _py_value(val.value.decode())

    def to_dict(self) -> Dict[str, Any]:
        p = ctypes.c_void_p()
        rc = lib.gn_options_to_string(self.buf, ctypes.byref(p))
        if rc != _lib.GN_OK:
            raise Error("gn_options_to_string: " + _lib.status_str(rc), rc)
        text = _lib.take_string(p.value)
        return ast.literal_eval(text)


#: Room for one option's printed value (GN_OPTIONS_STR_MAX plus quotes).
_OPT_VALUE_MAX = 1024 + 16


def default_options() -> Dict[str, Any]:
    """Every key with its default value (TensorFlow's, for TensorFlow's keys)."""
    o = _Options()
    return {k: o.get(k) for k in option_keys()}


def parse_options(options: Union[Mapping[str, Any], str, None]) -> Dict[str, Any]:
    """Parses options (dict or dictionary text) and returns the keys that differ
    from the defaults, as ``tf.config.optimizer.get_experimental_options()`` prints
    them. Raises Error naming a bad key (with the nearest valid one) or value."""
    return _Options(options).to_dict()


def list_passes() -> str:
    """The pass catalogue: each pass, its option key, and its pattern ids."""
    p = ctypes.c_void_p()
    rc = lib.gn_optimizer_list_passes(ctypes.byref(p))
    if rc != _lib.GN_OK:
        raise Error(_lib.status_str(rc), rc)
    return _lib.take_string(p.value)


_CONVERSION_FIELDS: List[str] = []


def _conversion_fields() -> List[str]:
    """The fields of ConversionParams, in TensorFlow's order (from the library)."""
    if not _CONVERSION_FIELDS:
        p = _lib.gn_conversion_params()
        lib.gn_conversion_params_init(ctypes.byref(p))
        out = ctypes.c_void_p()
        if lib.gn_conversion_params_to_string(ctypes.byref(p), ctypes.byref(out)) == _lib.GN_OK:
            _CONVERSION_FIELDS.extend(ast.literal_eval(_lib.take_string(out.value)).keys())
    return _CONVERSION_FIELDS


def _params_dict(params: Any) -> Union[Dict[str, Any], str, None]:
    """Conversion params as a dict (or the user's text): a dict, a
    TrtConversionParams namedtuple or an object with its attributes."""
    if params is None or isinstance(params, str):
        return params
    if isinstance(params, Mapping):
        d = {_plain(k): v for k, v in params.items()}
    else:
        d = _object_fields(params, _conversion_fields())
        if d is None:
            raise Error(f"conversion params must be a dict or a TrtConversionParams, not {type(params).__name__}", 1)
    return {k: _plain(v) for k, v in d.items()}


def _conversion_params(params: Any) -> _lib.gn_conversion_params:
    p = _lib.gn_conversion_params()
    lib.gn_conversion_params_init(ctypes.byref(p))
    params = _params_dict(params)
    if params is None:
        return p
    if isinstance(params, str):
        keys = _text_keys(params)
        if keys is not None:
            _check_keys(dict.fromkeys(keys), _conversion_fields(), "conversion parameter")
        text = params
    else:
        _check_keys(params, _conversion_fields(), "conversion parameter")
        for k, v in params.items():
            if not isinstance(v, (bool, int, float, str)):
                raise Error(f"conversion parameter '{k}': value {v!r} of type {type(v).__name__} "
                            f"is not a bool, int or str", 1)
        text = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in params.items()) + "}"
    err = ctypes.create_string_buffer(1024)
    rc = lib.gn_conversion_params_parse(ctypes.byref(p), text.encode(), err, len(err))
    if rc != _lib.GN_OK:
        raise Error(err.value.decode("utf-8", "replace"), rc)
    return p


def conversion_params(params: Any = None) -> Dict[str, Any]:
    """TensorFlow's ConversionParams (``tf.experimental.tensorrt.ConversionParams``
    fields) with defaults filled in and validated, as a dict. ``params``: a
    dict, dictionary text, or a ``TrtConversionParams`` (any object with its
    fields as attributes; ``TrtPrecisionMode.FP16`` and numpy scalars as values)."""
    p = _conversion_params(params)
    out = ctypes.c_void_p()
    rc = lib.gn_conversion_params_to_string(ctypes.byref(p), ctypes.byref(out))
    if rc != _lib.GN_OK:
        raise Error("conversion params: " + _lib.status_str(rc), rc)
    return ast.literal_eval(_lib.take_string(out.value))


_conversion_params_filled = conversion_params   # for Converter, whose argument has the same name


def has_savedmodel() -> bool:
    """Whether the library has SavedModel signatures and freezing (savedmodel.h)."""
    return _lib.has("gn_graph_freeze") and _lib.has("gn_graph_signature_count")


def has_savedmodel_save() -> bool:
    """Whether the library can write SavedModels (save.h)."""
    return _lib.has("gn_savedmodel_save") and _lib.has("gn_save_options_parse")


_SHARDING_KEY = "experimental_sharding_callback"


#: The fields of tf.saved_model.SaveOptions (its __slots__), as the library reads them.
SAVE_OPTION_FIELDS = ("namespace_whitelist", "save_debug_info", "function_aliases", "experimental_debug_stripper",
                      "experimental_io_device", "experimental_variable_policy", "experimental_custom_gradients",
                      "experimental_image_format", "experimental_skip_saver", "experimental_sharding_callback",
                      "extra_tags")


def _save_options_dict(options: Any) -> Union[Dict[str, Any], str, None]:
    if options is None or isinstance(options, str):
        return options
    if isinstance(options, Mapping):
        d = {_plain(k): v for k, v in options.items()}
    else:
        d = _object_fields(options, SAVE_OPTION_FIELDS)
        if d is None:
            raise Error(f"save options must be a dict or a tf.saved_model.SaveOptions, not {type(options).__name__}", 1)
    _check_keys(d, SAVE_OPTION_FIELDS, "SaveOptions field")
    return {k: _plain(v) for k, v in d.items()}


def save_options_text(options: Any) -> str:
    """The dict text gn_save_options_parse reads, from a dict with the fields of
    ``tf.saved_model.SaveOptions`` (``{'save_debug_info': True, 'namespace_whitelist':
    ['Custom'], 'experimental_variable_policy': 'save_variable_devices',
    'experimental_sharding_callback': 'MaxShardSizePolicy(1000000)'}``)."""
    options = _save_options_dict(options)
    if options is None:
        return "{}"
    if isinstance(options, str):
        keys = _text_keys(options)
        if keys is not None:
            _check_keys(dict.fromkeys(keys), SAVE_OPTION_FIELDS, "SaveOptions field")
        return options

    def val(k: str, v: Any) -> str:
        v = _plain(v)
        if isinstance(v, _Call):
            return str(v)
        if v is None or isinstance(v, bool):
            return repr(v)
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, str):
            # sharding callbacks are calls in the dict text: ShardByTaskPolicy(), MaxShardSizePolicy(N)
            if k == _SHARDING_KEY and v.rstrip().endswith(")"):
                return v
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(val(k, x) for x in v) + "]"
        if isinstance(v, Mapping):
            return "{" + ", ".join(f"{val(k, a)}: {val(k, b)}" for a, b in v.items()) + "}"
        raise Error(f"save option '{k}': value {v!r} of type {type(v).__name__} is not supported", 1)

    return "{" + ", ".join(f"{k!r}: {val(k, v)}" for k, v in options.items()) + "}"


def _save_value(node: Any, src: str) -> Any:
    if isinstance(node, ast.Dict):
        return {_save_value(k, src): _save_value(v, src) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_save_value(x, src) for x in node.elts]
    if isinstance(node, ast.Attribute):          # VariablePolicy.SAVE_VARIABLE_DEVICES
        return node.attr.lower()
    if isinstance(node, ast.Call):               # ShardByTaskPolicy(), MaxShardSizePolicy(N)
        return ast.get_source_segment(src, node)
    return ast.literal_eval(node)


class _SaveOptions:
    """A gn_save_options in a buffer owned here; cleared (its strings freed) once."""

    def __init__(self, options: Any = None):
        if not has_savedmodel_save():
            raise Error("this grapnel library cannot write SavedModels (save.h not built)", 7)
        self.buf = ctypes.create_string_buffer(_lib.SAVE_OPTIONS_BUF)
        lib.gn_save_options_init(self.buf)
        size = ctypes.c_uint32.from_buffer(self.buf).value
        if size > _lib.SAVE_OPTIONS_BUF:
            raise Error(f"gn_save_options is {size} bytes, more than the {_lib.SAVE_OPTIONS_BUF} reserved", 10)
        self.live = True
        err = ctypes.create_string_buffer(2048)
        try:
            text = save_options_text(options)
        except Error:
            self.close()
            raise
        rc = lib.gn_save_options_parse(self.buf, text.encode(), err, len(err))
        if rc != _lib.GN_OK:
            self.close()
            msg = _lib.s(err.value) or _lib.status_str(rc)
            if not isinstance(options, str):
                # the text was made here: its offsets mean nothing to the caller; name the value given
                msg = re.sub(r"at offset \d+: ", "", msg)
                d = _save_options_dict(options) or {}
                m = re.search(r"'(\w+)' takes", msg)
                if m and m.group(1) in d:
                    msg += f" (got {d[m.group(1)]!r})"
            raise Error(msg, rc)

    def close(self) -> None:
        if self.live:
            lib.gn_save_options_clear(self.buf)
            self.live = False

    def __del__(self) -> None:
        self.close()

    def to_dict(self) -> Dict[str, Any]:
        p = lib.gn_save_options_to_string(self.buf)
        if not p:
            raise Error("gn_save_options_to_string: out of memory", 3)
        text = _lib.take_string(p)
        return _save_value(ast.parse(text, mode="eval").body, text)


def parse_save_options(options: Any) -> Dict[str, Any]:
    """Parses SaveOptions (a dict, dict text, or a ``tf.saved_model.SaveOptions``:
    any object with its fields as attributes) and returns every field with its
    value (policies as lower-case names, sharding callbacks as call text).
    Raises Error naming an unknown field or a value of the wrong kind."""
    o = _SaveOptions(options)
    try:
        return o.to_dict()
    finally:
        o.close()


# ---- graphs ---------------------------------------------------------------------------------------------
_FORMATS = {None: 0, "auto": 0, "binary": 1, "pb": 1, "text": 2, "pbtxt": 2, "savedmodel": 3}
_PLACEHOLDERS = ("Placeholder", "PlaceholderV2", "_Arg")


def _format(fmt: Optional[str]) -> int:
    try:
        return _FORMATS[fmt.lower() if isinstance(fmt, str) else fmt]
    except KeyError:
        raise Error(f"format {fmt!r}: expected one of 'auto', 'binary', 'text'", 1) from None


def _canon(name: str) -> str:
    return name[:-2] if name.endswith(":0") else name


def _node_of(tensor: str) -> str:
    t = tensor[1:] if tensor.startswith("^") else tensor
    head, sep, tail = t.rpartition(":")
    return head if sep and tail.isdigit() else t


def _load_opts(fmt: Optional[str], tags: Optional[str], validate: bool) -> Tuple[_lib.gn_load_options, Any]:
    o = _lib.gn_load_options()
    lib.gn_load_options_init(ctypes.byref(o))
    o.format = _format(fmt)
    keep = tags.encode() if tags is not None else None
    o.tags = keep
    o.validate = 1 if validate else 0
    return o, keep


def _from_handle(h: ctypes.c_void_p, rc: int, what: str) -> "Graph":
    if rc != _lib.GN_OK:
        msg = _lib.s(lib.gn_graph_errmsg(h)) if h.value else ""
        lib.gn_graph_free(h)
        raise Error(msg or f"{what}: {_lib.status_str(rc)}", rc)
    return Graph(h.value)


def load(path: Union[str, os.PathLike], tags: Optional[Union[str, Sequence[str]]] = None,
         format: Optional[str] = None, validate: bool = True) -> "Graph":
    """Loads a ``.pb``, ``.pbtxt`` (optionally gzip-compressed) or a SavedModel
    directory. ``tags`` picks a SavedModel MetaGraphDef ("serve" or a list of
    tags); by default the only one, else the one tagged "serve"."""
    if tags is not None and not isinstance(tags, str):
        tags = ",".join(tags)
    o, keep = _load_opts(format, tags, validate)
    h = ctypes.c_void_p()
    rc = lib.gn_graph_load(os.fsencode(path), ctypes.byref(o), ctypes.byref(h))
    del keep
    return _from_handle(h, rc, os.fspath(path))


def loads(data: Union[bytes, str], format: Optional[str] = None, name: str = "<memory>",
          validate: bool = True) -> "Graph":
    """Loads a GraphDef from memory: bytes (binary or text, detected) or a str
    (text format)."""
    if isinstance(data, str):
        data = data.encode()
        if format is None:
            format = "text"
    o, keep = _load_opts(format, None, validate)
    h = ctypes.c_void_p()
    rc = lib.gn_graph_load_buffer(data, len(data), name.encode(), ctypes.byref(o), ctypes.byref(h))
    del keep
    return _from_handle(h, rc, name)


class Graph:
    """One TensorFlow graph (with its function library) held by the library.

    The handle is freed exactly once: by :meth:`close`, at the end of a
    ``with`` block, or when the object is collected. A Graph is used by one
    thread at a time."""

    def __init__(self, handle: int):
        self._h: Optional[int] = handle
        self._sessions: Dict[Tuple[str, int, int], int] = {}
        self._shapes = False
        self._frozen: Dict[str, "Graph"] = {}   # SavedModel: signature key -> its frozen graph

    # -- lifetime --
    def close(self) -> None:
        """Frees the graph and its cached sessions (idempotent)."""
        self._drop_frozen()
        self._drop_sessions()
        h, self._h = self._h, None
        if h:
            lib.gn_graph_free(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:   # interpreter shutdown
            pass

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._h is None

    def _handle(self) -> int:
        if self._h is None:
            raise Error("the graph is closed", 2)
        return self._h

    def _drop_sessions(self) -> None:
        for s in self._sessions.values():
            lib.gn_session_free(s)
        self._sessions.clear()

    def _drop_frozen(self) -> None:
        for f in getattr(self, "_frozen", {}).values():
            f.close()
        if hasattr(self, "_frozen"):
            self._frozen.clear()

    def _changed(self) -> None:
        self._drop_sessions()
        self._drop_frozen()
        self._shapes = False

    def _check(self, rc: int, what: str) -> None:
        if rc != _lib.GN_OK:
            msg = _lib.s(lib.gn_graph_errmsg(self._h)) if self._h else ""
            raise Error(msg or f"{what}: {_lib.status_str(rc)}", rc)

    def __repr__(self) -> str:
        if self._h is None:
            return "<grapnel.Graph closed>"
        return f"<grapnel.Graph {self.node_count} nodes>"

    # -- structure --
    @property
    def node_count(self) -> int:
        """Live nodes of the top-level graph."""
        return int(lib.gn_graph_node_count(self._handle()))

    def __len__(self) -> int:
        return self.node_count

    def infer_shapes(self) -> None:
        """Infers every node's output dtypes and shapes (used by nodes(outputs) and run defaults)."""
        self._drop_sessions()
        self._check(lib.gn_graph_infer_shapes(self._handle()), "infer_shapes")
        self._shapes = True

    def _ensure_shapes(self) -> None:
        if not self._shapes:
            self._drop_sessions()   # a session needs its graph unchanged
            lib.gn_graph_infer_shapes(self._handle())   # partial results are still useful
            self._shapes = True

    def _inputs_of(self, i: int) -> List[str]:
        h = self._handle()
        buf = ctypes.create_string_buffer(4096)
        out = []
        for k in range(lib.gn_graph_node_input_count(h, i)):
            self._check(lib.gn_graph_node_input(h, i, k, buf, len(buf)), "node_input")
            out.append(buf.value.decode())
        return out

    def _outputs_of(self, i: int) -> List[Dict[str, Any]]:
        h = self._handle()
        n = lib.gn_graph_node_output_count(h, i)
        outs = []
        dims = (ctypes.c_int64 * _lib.GN_TENSOR_MAX_DIMS)()
        for k in range(max(n, 0)):
            dt = lib.gn_graph_node_output_dtype(h, i, k)
            rank = lib.gn_graph_node_output_shape(h, i, k, dims, _lib.GN_TENSOR_MAX_DIMS)
            shape = None if rank < 0 else tuple(None if dims[j] < 0 else int(dims[j])
                                                for j in range(min(rank, _lib.GN_TENSOR_MAX_DIMS)))
            outs.append({"dtype": _lib.s(lib.gn_dtype_name(dt)) if dt else None,
                         "shape": shape})
        return outs

    def nodes(self, outputs: bool = False) -> List[Dict[str, Any]]:
        """Every node: ``{'name', 'op', 'device', 'inputs'}`` (inputs in TensorFlow's
        spelling, "^x" for control inputs); with outputs=True also
        ``'outputs': [{'dtype': 'float', 'shape': (None, 4)}, ...]`` (shapes inferred)."""
        h = self._handle()
        if outputs:
            self._ensure_shapes()
        out = []
        for i in range(lib.gn_graph_node_count(h)):
            d: Dict[str, Any] = {"name": _lib.s(lib.gn_graph_node_name(h, i)), "op": _lib.s(lib.gn_graph_node_op(h, i)),
                                 "device": _lib.s(lib.gn_graph_node_device(h, i)), "inputs": self._inputs_of(i)}
            if outputs:
                d["outputs"] = self._outputs_of(i)
            out.append(d)
        return out

    def functions(self) -> Dict[str, int]:
        """Function library: name -> node count of its body."""
        h = self._handle()
        return {_lib.s(lib.gn_graph_function_name(h, i)): int(lib.gn_graph_function_node_count(h, i))
                for i in range(lib.gn_graph_function_count(h))}

    def placeholders(self) -> List[Dict[str, Any]]:
        """The graph's inputs: ``{'name', 'dtype' (numpy name or None), 'shape'}``
        for every Placeholder (shape entries None when unknown)."""
        self._ensure_shapes()
        h = self._handle()
        out = []
        for i in range(lib.gn_graph_node_count(h)):
            if _lib.s(lib.gn_graph_node_op(h, i)) not in _PLACEHOLDERS:
                continue
            dt = lib.gn_graph_node_output_dtype(h, i, 0)
            o = self._outputs_of(i)
            out.append({"name": _lib.s(lib.gn_graph_node_name(h, i)),
                        "dtype": _lib.s(lib.gn_dtype_numpy_name(dt)) if dt else None,
                        "dtype_enum": int(dt),
                        "shape": o[0]["shape"] if o else None})
        return out

    def outputs(self) -> List[str]:
        """The default fetches, as ``grapnel run`` picks them: the inputs of
        _Retval nodes when there are any, else every output of nodes nothing
        consumes, by data or control edge (NoOps and placeholders excluded;
        when that leaves none, nodes consumed only by control edges count too)."""
        self._ensure_shapes()
        nodes = self.nodes()
        if any(n["op"] == "_Retval" for n in nodes):
            res: List[str] = []
            for n in nodes:
                if n["op"] == "_Retval" and n["inputs"] and not n["inputs"][0].startswith("^"):
                    c = _canon(n["inputs"][0])
                    if c not in res:
                        res.append(c)
            return res
        used = {_node_of(x) for n in nodes for x in n["inputs"] if not x.startswith("^")}
        anchors = {x[1:] for n in nodes for x in n["inputs"] if x.startswith("^")} - used
        h = self._handle()
        res: List[str] = []
        for skip in (used | anchors, used):
            for i, n in enumerate(nodes):
                if n["name"] in skip or n["op"] == "NoOp" or n["op"] in _PLACEHOLDERS:
                    continue
                no = lib.gn_graph_node_output_count(h, i)
                if no == 0:
                    continue
                res += [n["name"] if k == 0 else f"{n['name']}:{k}" for k in range(max(no, 1))]
            if res:
                break
        return res

    def inspect(self, shapes: bool = False) -> Dict[str, Any]:
        """A summary: ``{'nodes': count, 'ops': {op: count}, 'inputs': placeholders(),
        'outputs': outputs(), 'functions': {name: nodes}, 'devices': [...],
        'text': the `grapnel inspect` report}`` (with shapes=True the text lists
        every node's outputs)."""
        h = self._handle()
        p = ctypes.c_void_p()
        self._check(lib.gn_graph_inspect(h, 1 if shapes else 0, ctypes.byref(p)), "inspect")
        text = _lib.take_string(p.value)
        ops: Dict[str, int] = {}
        devices = set()
        for i in range(lib.gn_graph_node_count(h)):
            op = _lib.s(lib.gn_graph_node_op(h, i))
            ops[op] = ops.get(op, 0) + 1
            devices.add(_lib.s(lib.gn_graph_node_device(h, i)))
        return {"nodes": self.node_count, "ops": dict(sorted(ops.items())), "inputs": self.placeholders(),
                "outputs": self.outputs(), "functions": self.functions(), "devices": sorted(devices),
                "text": text}

    def to_dot(self) -> str:
        """Graphviz dot text of the graph and its function bodies."""
        p = ctypes.c_void_p()
        self._check(lib.gn_graph_to_dot(self._handle(), ctypes.byref(p)), "to_dot")
        return _lib.take_string(p.value)

    def validate(self) -> None:
        """Raises Error (naming the node) when the graph is structurally invalid."""
        self._check(lib.gn_graph_validate(self._handle()), "validate")

    def clone(self) -> "Graph":
        """An independent copy (tensor payloads shared internally)."""
        h = ctypes.c_void_p()
        rc = lib.gn_graph_clone(self._handle(), ctypes.byref(h))
        if rc != _lib.GN_OK:
            lib.gn_graph_free(h)
            self._check(rc, "clone")
        return Graph(h.value)

    # -- saving --
    def set_fsync(self, on: bool = True) -> None:
        """Whether the files written for this graph (save, save_savedmodel) are
        flushed to the disk before they are renamed into place, so that they
        survive a power loss. Off by default, as TensorFlow's writers; files are
        written whole and renamed either way."""
        lib.gn_graph_set_fsync(self._handle(), 1 if on else 0)

    def save(self, path: Union[str, os.PathLike], format: Optional[str] = None) -> None:
        """Writes the graph as a GraphDef, atomically: text for names ending in
        .pbtxt/.txt, binary otherwise (or as ``format`` says: 'binary'/'text')."""
        self._check(lib.gn_graph_save(self._handle(), os.fsencode(path), _format(format)), os.fspath(path))

    def serialize(self, format: str = "binary") -> bytes:
        """The GraphDef as bytes ('binary') or its text format ('text')."""
        p, n = ctypes.c_void_p(), ctypes.c_size_t()
        self._check(lib.gn_graph_serialize(self._handle(), _format(format), ctypes.byref(p), ctypes.byref(n)),
                    "serialize")
        try:
            return ctypes.string_at(p.value, n.value) if n.value else b""
        finally:
            lib.gn_free(p.value)

    # -- optimizing --
    def optimize(self, options: Union[Mapping[str, Any], str, None] = None, fetches: Optional[Iterable[str]] = None,
                 feeds: Optional[Iterable[str]] = None, target: str = "cpu",
                 dump_dir: Optional[Union[str, os.PathLike]] = None,
                 report_html: Optional[Union[str, os.PathLike]] = None) -> Dict[str, Any]:
        """Rewrites the graph in place with Grappler's pipeline.

        ``options`` is the dictionary ``tf.config.optimizer.set_experimental_options``
        takes (``{'constant_folding': True, 'layout_optimizer': False}``), with
        grapnel's dotted keys too (``{'layout.policy': 'NCHW'}``); keys not named
        keep TensorFlow's defaults. ``fetches``/``feeds`` name tensors that must be
        kept; ``target`` is "cpu", "gpu", "gpu:sm_80", ... Returns the report:
        ``{'total_micros', 'passes': [{'pass', 'iteration', 'nodes_before',
        'nodes_after', 'changed', ...}], 'events', 'notes', 'text'}``. With
        ``report_html`` the HTML report (the graph before and after, every
        rewrite drawn on both; docs/html_report.md) is written to that path."""
        h = self._handle()
        opts = _Options(options)
        params = _lib.gn_optimize_params()
        lib.gn_optimize_params_init(ctypes.byref(params))
        err = ctypes.create_string_buffer(1024)
        rc = lib.gn_target_parse(target.encode(), ctypes.byref(params.target), err, len(err))
        if rc != _lib.GN_OK:
            raise Error(_lib.s(err.value) or f"target '{target}': {_lib.status_str(rc)}", rc)
        fe = [f.encode() for f in (fetches or [])]
        fd = [f.encode() for f in (feeds or [])]
        fe_arr = (ctypes.c_char_p * max(len(fe), 1))(*fe)
        fd_arr = (ctypes.c_char_p * max(len(fd), 1))(*fd)
        params.fetches, params.n_fetches = fe_arr, len(fe)
        params.feeds, params.n_feeds = fd_arr, len(fd)
        dd = os.fsencode(dump_dir) if dump_dir is not None else None
        params.dump_dir = dd
        before = ctypes.c_void_p()
        if report_html is not None:
            rc = lib.gn_graph_clone(h, ctypes.byref(before))
            if rc != _lib.GN_OK:
                raise Error(f"optimize: keeping the graph for the HTML report: {_lib.status_str(rc)}", rc)
        self._changed()
        rep = ctypes.c_void_p()
        rc = lib.gn_optimize(h, opts.buf, ctypes.byref(params), ctypes.byref(rep))
        report: Dict[str, Any] = {}
        html_err = None
        if before.value:
            try:
                hp = _lib.gn_html_params()
                lib.gn_html_params_init(ctypes.byref(hp))
                hp.report = rep.value
                herr = ctypes.create_string_buffer(1024)
                if lib.gn_report_write_html(before.value, h, ctypes.byref(hp), os.fsencode(report_html), herr,
                                            len(herr)) != _lib.GN_OK:
                    html_err = "HTML report: " + _lib.s(herr.value)
            finally:
                lib.gn_graph_free(before.value)
        if rep.value:
            try:
                p = ctypes.c_void_p()
                if lib.gn_report_to_json(rep.value, ctypes.byref(p)) == _lib.GN_OK:
                    report = json.loads(_lib.take_string(p.value))
                if lib.gn_report_to_text(rep.value, ctypes.byref(p)) == _lib.GN_OK:
                    report["text"] = _lib.take_string(p.value)
            finally:
                lib.gn_report_free(rep.value)
        if rc != _lib.GN_OK:
            msg = _lib.s(lib.gn_graph_errmsg(h)) or f"optimize: {_lib.status_str(rc)}"
            raise Error(msg, rc, report)
        if html_err:
            raise Error(html_err, 4, report)
        return report

    # -- running --
    def _session(self, backend: str, seed: int, num_threads: int, limits: Tuple[int, int, int] = (0, 0, 0)) -> int:
        key = (backend, seed, num_threads, limits)
        s = self._sessions.get(key)
        if s:
            return s
        o = _lib.gn_session_options()
        lib.gn_session_options_init(ctypes.byref(o))
        b = backend.encode()
        o.backend = b
        o.seed = seed
        o.num_threads = num_threads
        o.memory_limit_bytes, o.step_limit, o.time_limit_ms = limits
        hs = ctypes.c_void_p()
        rc = lib.gn_session_new(self._handle(), ctypes.byref(o), ctypes.byref(hs))
        if rc != _lib.GN_OK:
            msg = _lib.s(lib.gn_session_errmsg(hs)) if hs.value else ""
            lib.gn_session_free(hs)
            raise Error(msg or f"session on '{backend}': {_lib.status_str(rc)}", rc)
        self._sessions[key] = hs.value
        return hs.value

    def _run(self, feeds: Mapping[str, Any], fetches: Sequence[str], backend: str, seed: int,
             num_threads: int, limits: Tuple[int, int, int] = (0, 0, 0)) -> List[np.ndarray]:
        s = self._session(backend, seed, num_threads, limits)
        fv = [_Feed(v) for v in feeds.values()]
        fnames = (ctypes.c_char_p * max(len(fv), 1))(*[k.encode() for k in feeds.keys()])
        ftens = (_lib.gn_tensor * max(len(fv), 1))(*[f.tensor for f in fv])
        onames = (ctypes.c_char_p * max(len(fetches), 1))(*[k.encode() for k in fetches])
        outs = (_lib.gn_tensor * max(len(fetches), 1))()
        rc = lib.gn_session_run(s, fnames, ftens, len(fv), onames, outs, len(fetches))
        try:
            if rc != _lib.GN_OK:
                raise Error(_lib.s(lib.gn_session_errmsg(s)) or f"run: {_lib.status_str(rc)}", rc)
            return [_to_numpy(outs[i]) for i in range(len(fetches))]
        finally:
            for i in range(len(fetches)):
                lib.gn_tensor_free(ctypes.byref(outs[i]))

    def run(self, feeds: Optional[Mapping[str, Any]] = None,
            fetches: Union[str, Sequence[str], None] = None, backend: str = "cpu", seed: int = 0,
            num_threads: int = 0, signature: Optional[str] = None, *,
            memory_limit_bytes: Optional[int] = None, step_limit: Optional[int] = None,
            time_limit_ms: Optional[int] = None
            ) -> Union[np.ndarray, List[np.ndarray], Dict[str, np.ndarray]]:
        """Runs the graph on a backend ("cpu").

        ``feeds`` maps tensor names ("x" or "x:0"; any tensor, the graph is cut
        there) to arrays; ``fetches`` is a list of tensor names (returns a list of
        arrays, in order), one name (returns one array), or None (the graph's
        outputs(); returns a dict name -> array). ``seed`` seeds random ops.
        A session per (backend, seed, num_threads) is kept and reused until the
        graph changes.

        On a SavedModel, the signature (``signature``, default "serving_default")
        is frozen on the first run and the frozen graph runs: feeds and fetches
        may name the signature's keys as well as tensors, and fetches=None
        returns every output by key (as ``signatures[key](**feeds)``).

        Resource bounds of the CPU backend (gn_session_options), each None for
        the library's default: ``memory_limit_bytes``, the most one tensor a node
        makes may take (default a quarter of the machine's memory);
        ``step_limit``, the most node executions of one run, loop iterations and
        function calls included (default 2**28); ``time_limit_ms``, a wall-clock
        limit of one run (default none). ``NO_LIMIT`` lifts the first two.
        Going past one raises ResourceExhaustedError (code 11, "resource limit
        exceeded") with a message naming the node."""
        limits = _limits(memory_limit_bytes, step_limit, time_limit_ms)
        if self._is_savedmodel():
            fn = self.signatures[self._signature_key(signature)]
            return fn._run_names(dict(feeds or {}), fetches, backend, seed, num_threads, limits)
        if signature is not None:
            raise Error(f"signature={signature!r}: the graph is not a SavedModel", _GN_ERR_ARG)
        feeds = dict(feeds or {})
        if fetches is None:
            names = self.outputs()
            if not names:
                raise Error("the graph has no outputs to fetch: name them with fetches=", 1)
        else:
            names = [fetches] if isinstance(fetches, str) else list(fetches)
        try:
            outs = self._run(feeds, names, backend, seed, num_threads, limits)
        except Error as e:
            if e.code == _GN_ERR_NOT_FOUND:
                self._check_names(feeds, names)
            raise
        if fetches is None:
            return dict(zip(names, outs))
        return outs[0] if isinstance(fetches, str) else outs

    def _check_names(self, feeds: Mapping[str, Any], fetches: Sequence[str]) -> None:
        """After a run failed on a name: the feed or fetch the graph lacks, as
        ``grapnel run`` says it, with the nearest of the graph's inputs (its
        placeholders) or outputs and the list of them."""
        nodes = self.nodes()
        names = {n["name"] for n in nodes}
        for side, given in (("inputs", list(feeds)), ("outputs", list(fetches))):
            for name in given:
                if _node_of(name) in names:
                    continue
                valid = ([n["name"] for n in nodes if n["op"] in _PLACEHOLDERS] if side == "inputs"
                         else self.outputs())
                near = _nearest(name, valid)
                hint = f"; did you mean '{near}'?" if near else ""
                raise Error(f"no tensor '{name}' in the graph{hint} (its {side}: {', '.join(valid) or 'none'})",
                            _GN_ERR_NOT_FOUND)

    def benchmark(self, feeds: Optional[Mapping[str, Any]] = None, fetches: Union[str, Sequence[str], None] = None,
                  repeat: int = 100, warmup: int = 1, backend: str = "cpu", seed: int = 0, num_threads: int = 0,
                  signature: Optional[str] = None) -> Dict[str, Any]:
        """Times ``run``: ``warmup`` untimed runs, then ``repeat`` timed ones on the
        same feeds (placeholders not fed get random_feeds). Returns, as
        ``grapnel run --repeat N --json`` writes it: ``{'runs', 'warmup',
        'latency_ms': {'min', 'median', 'p90', 'max', 'mean'}, 'throughput_per_s'}``
        (median of an even count: the mean of the middle two; p90: the nearest
        rank). The times include the copies between numpy and the library."""
        if self._is_savedmodel():
            return self.signatures[self._signature_key(signature)].benchmark(
                repeat=repeat, warmup=warmup, backend=backend, seed=seed, num_threads=num_threads, **dict(feeds or {}))
        repeat, warmup = _check_repeat(repeat, warmup)
        names = [fetches] if isinstance(fetches, str) else list(fetches) if fetches is not None else self.outputs()
        all_feeds = dict(feeds or {})
        all_feeds.update(self.random_feeds(names, all_feeds, seed))
        return _time_runs(lambda: self._run(all_feeds, names, backend, seed, num_threads), repeat, warmup)

    # -- SavedModel signatures, TensorFlow style --
    def _is_savedmodel(self) -> bool:
        return has_savedmodel() and (lib.gn_graph_signature_count(self._handle()) > 0 or bool(self.tags))

    def _signature_key(self, signature: Optional[str]) -> str:
        if signature is not None:
            return signature
        if _lib.has("gn_graph_default_signature"):
            return _lib.s(lib.gn_graph_default_signature(self._handle()))
        return "serving_default"

    @property
    def signatures(self) -> "_Signatures":
        """The SavedModel's signatures as TensorFlow's ``loaded.signatures``: a
        mapping from key to a :class:`SignatureFunction`, called with keyword
        arguments by input key and returning a dict by output key
        (``g.signatures['serving_default'](x=np.ones((1, 4), np.float32))``).
        Calling the mapping, ``g.signatures()``, gives their descriptions:
        ``{key: {'method', 'inputs': {k: {'tensor', 'dtype', 'shape'}},
        'outputs': {...}}}`` ({} for a GraphDef). The SavedModel's init op
        (``__saved_model_init_op``) is not a signature here."""
        return _Signatures(self)

    def _frozen_graph(self, key: str) -> "Graph":
        g = self._frozen.get(key)
        if g is None:
            g = self.freeze(key)
            self._frozen[key] = g
        return g

    def _needed_placeholders(self, fetches: Sequence[str], fed: Iterable[str]) -> List[str]:
        nodes = self.nodes()
        by_name = {n["name"]: n for n in nodes}
        fed_c = {_canon(f) for f in fed}
        seen, stack, out = set(), [], []
        for f in fetches:
            if _canon(f) in fed_c:
                continue
            n = _node_of(f)
            if n in by_name and n not in seen:
                seen.add(n)
                stack.append(n)
        while stack:
            n = by_name[stack.pop()]
            if n["op"] in _PLACEHOLDERS:
                out.append(n["name"])
                continue
            for x in n["inputs"]:
                ctrl = x.startswith("^")
                if not ctrl and _canon(x) in fed_c:
                    continue
                m = _node_of(x)
                if m not in by_name or m in seen or (ctrl and m in fed_c):
                    continue
                seen.add(m)
                stack.append(m)
        return out

    def random_feeds(self, fetches: Optional[Sequence[str]] = None, feeds: Optional[Mapping[str, Any]] = None,
                     seed: int = 0, dim: int = 1,
                     shapes: Optional[Mapping[str, Sequence[int]]] = None) -> Dict[str, np.ndarray]:
        """Random arrays for the placeholders the fetches need that ``feeds``
        does not cover: floats uniform in [-1, 1), integers in 0..9, bools
        random; shapes from the placeholder (unknown dims = ``dim``) or ``shapes``."""
        fetches = list(fetches) if fetches is not None else self.outputs()
        feeds = dict(feeds or {})
        shapes = {_canon(k): v for k, v in (shapes or {}).items()}
        info = {p["name"]: p for p in self.placeholders()}
        rng = np.random.default_rng(seed)
        out: Dict[str, np.ndarray] = {}
        for name in self._needed_placeholders(fetches, feeds.keys()):
            p = info[name]
            if name in shapes:
                shape = tuple(int(d) for d in shapes[name])
            elif p["shape"] is None:
                raise Error(f"placeholder '{name}' has no known shape: give one with shapes= or feed it", 1)
            else:
                shape = tuple(dim if d is None else d for d in p["shape"])
            if not p["dtype_enum"]:
                raise Error(f"placeholder '{name}' has no known dtype: feed it", 1)
            dt = dtype_to_numpy(p["dtype_enum"])
            if dt.kind == "f":
                a = rng.uniform(-1.0, 1.0, size=shape).astype(dt)
            elif dt.kind == "b":
                a = rng.integers(0, 2, size=shape).astype(bool)
            elif dt == np.uint8:
                a = rng.integers(0, 256, size=shape).astype(dt)
            elif dt.kind in "iu":
                a = rng.integers(0, 10, size=shape).astype(dt)
            else:
                raise Error(f"cannot make random {dt} data for placeholder '{name}': feed it", 7)
            out[name] = a
        return out

    def verify(self, other: "Graph", feeds: Optional[Mapping[str, Any]] = None,
               fetches: Optional[Sequence[str]] = None, tol: Optional[float] = None, seed: int = 0, dim: int = 1,
               shapes: Optional[Mapping[str, Sequence[int]]] = None, backend: str = "cpu") -> Dict[str, Dict[str, Any]]:
        """Runs this graph (the reference) and ``other`` on the same inputs and
        compares every fetch, as ``grapnel verify`` does. Feeds not given are
        random (``random_feeds``, drawn for both graphs' placeholders); fetches
        default to this graph's outputs(). ``tol`` is the relative L2 error
        allowed (None: 1e-5 for float32/64, 1e-2 for float16).

        Returns ``{fetch: {'match': bool, 'max_abs_err', 'rel_l2_err', 'tol',
        'n_diff', 'n_nan_mismatch', 'why', 'dtype', 'shape'}}``."""
        fetches = list(fetches) if fetches is not None else self.outputs()
        all_feeds = dict(feeds or {})
        all_feeds.update(self.random_feeds(fetches, all_feeds, seed, dim, shapes))
        all_feeds.update(other.random_feeds(fetches, all_feeds, seed, dim, shapes))
        user = {_canon(k) for k in (feeds or {})}

        def for_graph(g: Graph) -> Dict[str, Any]:
            names = {n["name"] for n in g.nodes()}
            return {k: v for k, v in all_feeds.items() if _node_of(k) in names or _canon(k) in user}

        ref = self._run(for_graph(self), fetches, backend, seed, 0)
        got = other._run(for_graph(other), fetches, backend, seed, 0)
        result: Dict[str, Dict[str, Any]] = {}
        for name, r, a in zip(fetches, ref, got):
            cr = _lib.gn_compare_result()
            fa, fr = _Feed(a), _Feed(r)
            rc = lib.gn_tensor_compare(ctypes.byref(fa.tensor), ctypes.byref(fr.tensor), -1.0 if tol is None else tol,
                                       ctypes.byref(cr))
            if rc != _lib.GN_OK:
                raise Error(f"compare '{name}': {_lib.status_str(rc)}", rc)
            result[name] = {"match": bool(cr.match), "max_abs_err": cr.max_abs_err, "rel_l2_err": cr.rel_l2_err,
                            "tol": cr.tol, "n_diff": int(cr.n_diff), "n_nan_mismatch": int(cr.n_nan_mismatch),
                            "why": cr.why.decode("utf-8", "replace"), "dtype": str(r.dtype), "shape": r.shape}
        return result

    # -- SavedModel (present when the library exports savedmodel.h) --
    def _need(self, fn: str) -> None:
        if not _lib.has(fn):
            raise Error(f"this grapnel library has no {fn} (SavedModel support not built)", 7)

    @property
    def tags(self) -> str:
        """The chosen MetaGraphDef's tags ("serve"); "" for a GraphDef."""
        self._need("gn_graph_tags")
        return _lib.s(lib.gn_graph_tags(self._handle()))

    def _signature_info(self) -> Dict[str, Dict[str, Any]]:
        """SavedModel signatures: ``{key: {'method', 'inputs': {k: {'tensor', 'dtype',
        'shape'}}, 'outputs': {...}}}``; {} for a GraphDef."""
        self._need("gn_graph_signature_count")
        h = self._handle()
        res: Dict[str, Dict[str, Any]] = {}
        for i in range(lib.gn_graph_signature_count(h)):
            key = lib.gn_graph_signature_key(h, i)
            entry: Dict[str, Any] = {"method": _lib.s(lib.gn_graph_signature_method(h, key))}
            for side, which in (("inputs", 0), ("outputs", 1)):
                n = ctypes.c_size_t()
                self._check(lib.gn_graph_signature_args(h, key, which, ctypes.byref(n)), "signature_args")
                args = {}
                for k in range(n.value):
                    a = _lib.gn_signature_arg()
                    self._check(lib.gn_graph_signature_arg(h, key, which, k, ctypes.byref(a)), "signature_arg")
                    shape = None if a.rank < 0 else tuple(None if a.dims[j] < 0 else int(a.dims[j])
                                                          for j in range(min(a.rank, 8)))
                    args[_lib.s(a.key)] = {"tensor": _lib.s(a.tensor),
                                           "dtype": _lib.s(lib.gn_dtype_numpy_name(a.dtype)) if a.dtype else None,
                                           "shape": shape}
                entry[side] = args
            res[_lib.s(key)] = entry
        return res

    def variables(self) -> List[Dict[str, Any]]:
        """The SavedModel's variables: ``{'name', 'dtype', 'shape', 'bytes'}``."""
        self._need("gn_graph_variable_count")
        h = self._handle()
        n = ctypes.c_size_t()
        self._check(lib.gn_graph_variable_count(h, ctypes.byref(n)), "variables")
        out = []
        for i in range(n.value):
            v = _lib.gn_variable_info()
            self._check(lib.gn_graph_variable(h, i, ctypes.byref(v)), "variable")
            out.append({"name": _lib.s(v.name), "dtype": _lib.s(lib.gn_dtype_numpy_name(v.dtype)),
                        "shape": tuple(int(v.dims[j]) for j in range(max(min(v.rank, 8), 0))), "bytes": int(v.bytes)})
        return out

    def freeze(self, signature: Optional[str] = None) -> "Graph":
        """The frozen inference graph of a SavedModel signature (None:
        "serving_default", else the only one): variables become constants,
        function calls are inlined. Its feeds and fetches are the signature's
        tensor names (signatures())."""
        self._need("gn_graph_freeze")
        h = ctypes.c_void_p()
        rc = lib.gn_graph_freeze(self._handle(), signature.encode() if signature is not None else None,
                                 ctypes.byref(h))
        if rc != _lib.GN_OK:
            msg = _lib.s(lib.gn_graph_errmsg(self._h))
            lib.gn_graph_free(h)
            raise Error(msg or f"freeze: {_lib.status_str(rc)}", rc)
        return Graph(h.value)

    def segment(self, params: Union[Mapping[str, Any], str, None] = None, backend: str = "cpu",
                fetches: Optional[Sequence[str]] = None, feeds: Optional[Sequence[str]] = None,
                dry_run: bool = False) -> Dict[str, Any]:
        """Engine conversion, as TF-TRT: replaces the subgraphs ``backend`` supports
        with ``Grapnel>EngineOp`` nodes (in place unless ``dry_run``). ``params``
        has the fields of ``tf.experimental.tensorrt.ConversionParams``;
        ``fetches``/``feeds`` stay outside every engine. Returns
        ``{'engines': N, 'report': text}``: one report line per engine and per
        node not converted, with the reason."""
        h = self._handle()
        p = _conversion_params(params)
        sp = _lib.gn_segment_params()
        lib.gn_segment_params_init(ctypes.byref(sp))
        keep = [t.encode() for t in list(fetches or []) + list(feeds or [])]
        arr = (ctypes.c_char_p * max(len(keep), 1))(*keep)
        be = backend.encode()
        sp.backend, sp.preserve, sp.n_preserve, sp.dry_run = be, arr, len(keep), 1 if dry_run else 0
        rep = ctypes.c_void_p()
        n = ctypes.c_size_t()
        self._check(lib.gn_segment(h, ctypes.byref(p), ctypes.byref(sp), ctypes.byref(rep), ctypes.byref(n)),
                    "segment")
        if not dry_run:
            self._changed()
        return {"engines": n.value, "report": _lib.take_string(rep.value)}

    def calibrate(self, batches: Sequence[Mapping[str, Any]]) -> str:
        """INT8 calibration (after ``segment`` with ``precision_mode`` INT8 and
        ``use_calibration``): runs the graph on each batch (a dict of feed name
        to array, the same names in every batch) and stores each INT8 engine's
        calibration table (the ranges of its tensors) in the engine op. Returns
        the report, one line per engine."""
        h = self._handle()
        if not batches:
            raise Error("calibrate: no batch", _lib.GN_ERR_ARG)
        names = list(batches[0].keys())
        feeds = []
        for b in batches:
            if list(b.keys()) != names:
                raise Error("calibrate: every batch must feed the same names in the same order", _lib.GN_ERR_ARG)
            feeds.extend(_Feed(b[k]) for k in names)
        fnames = (ctypes.c_char_p * max(len(names), 1))(*[k.encode() for k in names])
        ftens = (_lib.gn_tensor * max(len(feeds), 1))(*[f.tensor for f in feeds])
        rep = ctypes.c_void_p()
        self._check(lib.gn_calibrate(h, fnames, len(names), ftens, len(batches), ctypes.byref(rep)), "calibrate")
        self._changed()  # engines are built from the new tables
        return _lib.take_string(rep.value)

    def save_savedmodel(self, directory: Union[str, os.PathLike],
                        save_options: Union[Mapping[str, Any], str, None] = None,
                        feeds: Optional[Sequence[str]] = None, fetches: Optional[Sequence[str]] = None,
                        signature_key: Optional[str] = None, tags: Optional[Union[str, Sequence[str]]] = None) -> None:
        """Writes the graph as a SavedModel directory (which must not exist, or be
        empty). ``save_options`` has the fields of ``tf.saved_model.SaveOptions``
        (see parse_save_options). For a GraphDef, ``feeds``/``fetches`` name the
        serving signature's inputs and outputs (no feeds: every Placeholder); a
        SavedModel keeps its signatures. ``signature_key`` defaults to
        "serving_default", ``tags`` to the loaded ones, else "serve"."""
        h = self._handle()
        opts = _SaveOptions(save_options)
        try:
            p = _lib.gn_save_params()
            lib.gn_save_params_init(ctypes.byref(p))
            fd = [f.encode() for f in (feeds or [])]
            fe = [f.encode() for f in (fetches or [])]
            fd_arr = (ctypes.c_char_p * max(len(fd), 1))(*fd)
            fe_arr = (ctypes.c_char_p * max(len(fe), 1))(*fe)
            p.feeds, p.n_feeds = fd_arr, len(fd)
            p.fetches, p.n_fetches = fe_arr, len(fe)
            sk = signature_key.encode() if signature_key is not None else None
            if tags is not None and not isinstance(tags, str):
                tags = ",".join(tags)
            tg = tags.encode() if tags is not None else None
            p.signature_key, p.tags = sk, tg
            self._check(lib.gn_savedmodel_save(h, os.fsencode(directory), opts.buf, ctypes.byref(p)),
                        os.fspath(directory))
        finally:
            opts.close()


# ---- timing -----------------------------------------------------------------------------------------------
def _limits(memory_limit_bytes: Any, step_limit: Any, time_limit_ms: Any) -> Tuple[int, int, int]:
    """Graph.run's resource bounds as gn_session_options takes them (0: the default)."""
    out = []
    for name, v in (("memory_limit_bytes", memory_limit_bytes), ("step_limit", step_limit),
                    ("time_limit_ms", time_limit_ms)):
        if v is None:
            out.append(0)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= int(v) <= NO_LIMIT:
            raise Error(f"{name}={v!r}: expected a positive integer, NO_LIMIT or None (the default)", _GN_ERR_ARG)
        if name == "time_limit_ms" and int(v) == NO_LIMIT:
            raise Error("time_limit_ms=NO_LIMIT: no time limit is the default (None)", _GN_ERR_ARG)
        out.append(int(v))
    return out[0], out[1], out[2]


def _check_repeat(repeat: Any, warmup: Any) -> Tuple[int, int]:
    r, w = _plain(repeat), _plain(warmup)
    if not isinstance(r, int) or isinstance(r, bool) or r < 1:
        raise Error(f"repeat={repeat!r}: expected a positive integer", _GN_ERR_ARG)
    if not isinstance(w, int) or isinstance(w, bool) or w < 0:
        raise Error(f"warmup={warmup!r}: expected a non-negative integer", _GN_ERR_ARG)
    return r, w


def _time_runs(fn: Any, repeat: int, warmup: int) -> Dict[str, Any]:
    """The statistics `grapnel run --repeat` prints, over fn's timed calls."""
    for _ in range(warmup):
        fn()
    lat = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        lat.append(time.perf_counter() - t0)
    lat.sort()
    n = len(lat)
    median = lat[n // 2] if n % 2 else (lat[n // 2 - 1] + lat[n // 2]) / 2
    total = sum(lat)
    return {"runs": n, "warmup": warmup,
            "latency_ms": {"min": lat[0] * 1e3, "median": median * 1e3, "p90": lat[(9 * n + 9) // 10 - 1] * 1e3,
                           "max": lat[-1] * 1e3, "mean": total / n * 1e3},
            "throughput_per_s": n / total if total > 0 else 0.0}


# ---- signatures, TensorFlow style ---------------------------------------------------------------------------
_INIT_OP = "__saved_model_init_op"


class SignatureFunction:
    """One signature of a SavedModel, as TensorFlow's ``loaded.signatures[key]``:
    called with keyword arguments by input key (arrays, or anything numpy
    converts), it returns a dict by output key. The SavedModel is frozen on
    the first call (once per signature; the frozen graph is kept until the
    graph changes or is closed)."""

    def __init__(self, graph: Graph, key: str, info: Dict[str, Any], frozen: Optional[Graph] = None):
        self._graph = graph
        self.name = key
        self._info = info
        self._fixed = frozen   # Converter: the converted graph itself

    @property
    def inputs(self) -> Dict[str, Dict[str, Any]]:
        """Input key -> ``{'tensor', 'dtype', 'shape'}``."""
        return self._info["inputs"]

    @property
    def outputs(self) -> Dict[str, Dict[str, Any]]:
        """Output key -> ``{'tensor', 'dtype', 'shape'}``."""
        return self._info["outputs"]

    @property
    def structured_input_signature(self) -> Tuple[Tuple[()], Dict[str, Dict[str, Any]]]:
        """``((), {key: {'dtype', 'shape'}})``, the shape of TensorFlow's attribute."""
        return ((), {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in self.inputs.items()})

    @property
    def structured_outputs(self) -> Dict[str, Dict[str, Any]]:
        return {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in self.outputs.items()}

    def __repr__(self) -> str:
        return (f"<grapnel.SignatureFunction {self.name!r} inputs={list(self.inputs)} "
                f"outputs={list(self.outputs)}>")

    def graph(self) -> Graph:
        """The frozen graph this signature runs (made on first use, owned here)."""
        return self._fixed if self._fixed is not None else self._graph._frozen_graph(self.name)

    def _feeds(self, kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        valid = list(self.inputs)
        for k in kwargs:
            if k not in self.inputs:
                near = _nearest(k, valid)
                hint = f"; did you mean '{near}'?" if near else ""
                raise Error(f"signature '{self.name}' has no input '{k}'{hint} (inputs: {', '.join(valid) or 'none'})",
                            _GN_ERR_ARG)
        missing = [k for k in valid if k not in kwargs]
        if missing:
            raise Error(f"signature '{self.name}': missing input{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(k) for k in missing)} (inputs: {', '.join(valid)})", _GN_ERR_ARG)
        return {self.inputs[k]["tensor"]: self._as_input(k, v) for k, v in kwargs.items()}

    def _as_input(self, key: str, v: Any) -> Any:
        """A value that is not an array yet (a list, a Python number) in the
        input's dtype, as TensorFlow converts it to the signature's spec."""
        dt = self.inputs[key].get("dtype")
        if isinstance(v, np.ndarray) or dt in (None, "string"):
            return v
        return np.asarray(v, dtype=dt)

    def __call__(self, *args: Any, **kwargs: Any) -> Dict[str, np.ndarray]:
        if args:
            raise Error(f"signature '{self.name}' takes keyword arguments only, by input key "
                        f"({', '.join(self.inputs) or 'none'}), as TensorFlow's signatures do", _GN_ERR_ARG)
        feeds = self._feeds(kwargs)
        keys = list(self.outputs)
        outs = self.graph()._run(feeds, [self.outputs[k]["tensor"] for k in keys], "cpu", 0, 0)
        return dict(zip(keys, outs))

    def benchmark(self, repeat: int = 100, warmup: int = 1, backend: str = "cpu", seed: int = 0,
                  num_threads: int = 0, **kwargs: Any) -> Dict[str, Any]:
        """Times calls on the inputs given by key (as Graph.benchmark)."""
        repeat, warmup = _check_repeat(repeat, warmup)
        feeds = self._feeds(kwargs)
        g = self.graph()
        tensors = [v["tensor"] for v in self.outputs.values()]
        return _time_runs(lambda: g._run(feeds, tensors, backend, seed, num_threads), repeat, warmup)

    def _run_names(self, feeds: Dict[str, Any], fetches: Union[str, Sequence[str], None], backend: str, seed: int,
                   num_threads: int, limits: Tuple[int, int, int] = (0, 0, 0)
                   ) -> Union[np.ndarray, List[np.ndarray], Dict[str, np.ndarray]]:
        """Graph.run on a SavedModel: keys or tensor names, on the frozen graph."""
        g = self.graph()
        names = {n["name"] for n in g.nodes()}

        def tensor(name: str, side: Dict[str, Dict[str, Any]], what: str) -> str:
            if name in side:
                return side[name]["tensor"]
            if _node_of(name) in names:
                return name
            valid = list(side)
            near = _nearest(name, valid)
            hint = f"; did you mean '{near}'?" if near else ""
            raise Error(f"'{name}' is neither {what} key of signature '{self.name}' nor a tensor of its frozen graph"
                        f"{hint} ({what.split()[-1]} keys: {', '.join(valid) or 'none'})", _GN_ERR_ARG)

        fd = {tensor(k, self.inputs, "an input"): v for k, v in feeds.items()}
        if fetches is None:
            keys = list(self.outputs)
            outs = g._run(fd, [self.outputs[k]["tensor"] for k in keys], backend, seed, num_threads, limits)
            return dict(zip(keys, outs))
        one = isinstance(fetches, str)
        fl = [fetches] if one else list(fetches)
        outs = g._run(fd, [tensor(f, self.outputs, "an output") for f in fl], backend, seed, num_threads, limits)
        return outs[0] if one else outs


class _Signatures(Mapping):
    """Graph.signatures: key -> SignatureFunction (the init op left out); called,
    the descriptions of every signature (the earlier Graph.signatures())."""

    def __init__(self, graph: Graph):
        self._graph = graph
        self._info = graph._signature_info() if has_savedmodel() else {}

    def __call__(self) -> Dict[str, Dict[str, Any]]:
        return self._info

    def __getitem__(self, key: str) -> SignatureFunction:
        if key == _INIT_OP or key not in self._info:
            valid = [k for k in self._info if k != _INIT_OP]
            near = _nearest(key, valid) if isinstance(key, str) else None
            hint = f"; did you mean '{near}'?" if near else ""
            raise _SignatureKeyError(f"no signature '{key}'{hint} (signatures: {', '.join(valid) or 'none'})",
                                     _GN_ERR_NOT_FOUND)
        return SignatureFunction(self._graph, key, self._info[key])

    def __iter__(self) -> Any:
        return iter([k for k in self._info if k != _INIT_OP])

    def __len__(self) -> int:
        return sum(1 for k in self._info if k != _INIT_OP)

    def __repr__(self) -> str:
        return f"_SignatureMap({dict((k, self[k]) for k in self)!r})"


class _SignatureKeyError(Error, KeyError):
    """A signature key the SavedModel lacks (a KeyError, as a mapping raises)."""


# ---- Converter, TrtGraphConverterV2's flow --------------------------------------------------------------
class Converter:
    """Engine conversion of a SavedModel, in the shape of TF-TRT's
    ``TrtGraphConverterV2``::

        c = grapnel.Converter(input_saved_model_dir="sm", conversion_params=TrtConversionParams(
                precision_mode="FP16", minimum_segment_size=3))
        fn = c.convert()                  # INT8 with use_calibration: convert(calibration_input_fn)
        c.build(input_fn)                 # optional: engines built ahead of time for these shapes
        c.save("sm_converted", options=tf.saved_model.SaveOptions(...))
        c.summary()

    The signature (``input_saved_model_signature_key``, default
    "serving_default") is frozen, then segmented by the library's segmenter
    (``backend``: whose support decides the engines, default "cpu"); its
    inputs and outputs stay outside every engine. ``conversion_params`` is a
    dict or a TrtConversionParams (or the individual keyword arguments, as
    TensorFlow's constructor takes them). Input functions yield, per batch,
    a tuple or list of arrays in the signature's input order, or a dict by
    input key."""

    def __init__(self, input_saved_model_dir: Union[str, os.PathLike, None] = None,
                 input_saved_model_tags: Optional[Union[str, Sequence[str]]] = None,
                 input_saved_model_signature_key: Optional[str] = None, use_dynamic_shape: Optional[bool] = None,
                 dynamic_shape_profile_strategy: Optional[str] = None, max_workspace_size_bytes: Any = None,
                 precision_mode: Any = None, minimum_segment_size: Any = None, maximum_cached_engines: Any = None,
                 use_calibration: Any = None, allow_build_at_runtime: Any = None, conversion_params: Any = None,
                 backend: str = "cpu"):
        if input_saved_model_dir is None:
            raise Error("input_saved_model_dir is required", _GN_ERR_ARG)
        single = {"max_workspace_size_bytes": max_workspace_size_bytes, "precision_mode": precision_mode,
                  "minimum_segment_size": minimum_segment_size, "maximum_cached_engines": maximum_cached_engines,
                  "use_calibration": use_calibration, "allow_build_at_runtime": allow_build_at_runtime}
        single = {k: v for k, v in single.items() if v is not None}
        if conversion_params is not None and single:
            raise Error(f"give conversion_params or {', '.join(single)}, not both", _GN_ERR_ARG)
        params = _params_dict(conversion_params) if conversion_params is not None else {
            k: _plain(v) for k, v in single.items()}
        #: the conversion parameters in force, every field (as grapnel.conversion_params returns them)
        self.conversion_params: Dict[str, Any] = _conversion_params_filled(params)
        self._dir = input_saved_model_dir
        self._tags = input_saved_model_tags
        self._key = input_saved_model_signature_key
        self._backend = backend
        self._source: Optional[Graph] = None
        self._graph: Optional[Graph] = None
        self._info: Optional[Dict[str, Any]] = None
        self._report = ""
        self._engines = 0
        self._calibration = ""
        self._built = ""

    def _inputs(self) -> List[str]:
        assert self._info is not None
        return list(self._info["inputs"])

    def _batch(self, b: Any, what: str) -> Dict[str, Any]:
        """One batch of an input function: feeds by tensor name."""
        assert self._info is not None
        keys = self._inputs()
        if isinstance(b, Mapping):
            fn = SignatureFunction(self._source, self._key or "", self._info)   # type: ignore[arg-type]
            return fn._feeds(dict(b))
        items = list(b) if isinstance(b, (list, tuple)) else [b]
        if len(items) != len(keys):
            raise Error(f"{what}: a batch of {len(items)} array(s) for {len(keys)} input(s) ({', '.join(keys)})",
                        _GN_ERR_ARG)
        return {self._info["inputs"][k]["tensor"]: np.asarray(v) for k, v in zip(keys, items)}

    def convert(self, calibration_input_fn: Any = None) -> SignatureFunction:
        """Freezes the signature and replaces the subgraphs the backend supports
        with engine ops; with precision_mode INT8 and use_calibration, runs
        calibration_input_fn's batches to fill each engine's calibration table.
        Returns the converted function (called as a signature)."""
        if self._graph is not None:
            raise Error("convert() was already called", 2)
        int8 = str(self.conversion_params["precision_mode"]).upper() == "INT8"
        calibrate = int8 and self.conversion_params["use_calibration"]
        if calibrate and calibration_input_fn is None:
            raise Error("precision_mode INT8 with use_calibration needs calibration_input_fn", _GN_ERR_ARG)
        if calibration_input_fn is not None and not calibrate:
            raise Error("calibration_input_fn is only for precision_mode INT8 with use_calibration", _GN_ERR_ARG)
        self._source = load(self._dir, tags=self._tags)
        key = self._source._signature_key(self._key)
        self._key = key
        fn = self._source.signatures[key]
        self._info = {"inputs": fn.inputs, "outputs": fn.outputs, "method": fn._info.get("method")}
        g = self._source.freeze(key)
        try:
            tensors_in = [v["tensor"] for v in fn.inputs.values()]
            tensors_out = [v["tensor"] for v in fn.outputs.values()]
            r = g.segment(self.conversion_params, backend=self._backend, fetches=tensors_out, feeds=tensors_in)
            self._engines, self._report = r["engines"], r["report"]
            if calibrate:
                batches = [self._batch(b, "calibration_input_fn") for b in calibration_input_fn()]
                if not batches:
                    raise Error("calibration_input_fn yielded no batch", _GN_ERR_ARG)
                self._calibration = g.calibrate(batches) if self._engines else ""
        except BaseException:
            g.close()
            raise
        self._graph = g
        return SignatureFunction(self._source, key, self._info, frozen=g)

    def _need_converted(self, what: str) -> Graph:
        if self._graph is None:
            raise Error(f"{what}: call convert() first", 2)
        return self._graph

    def build(self, input_fn: Any) -> None:
        """Builds the engines ahead of time (TF-TRT's build): runs the converted
        graph on each batch input_fn yields; the engines built are saved by
        save() and reloaded by sessions on the saved model."""
        g = self._need_converted("build")
        if not self._engines:
            return
        if not _lib.has("gn_engines_build"):
            raise Error("this grapnel library has no gn_engines_build", 7)
        reports = []
        for b in input_fn():
            feeds = self._batch(b, "input_fn")
            fv = [_Feed(v) for v in feeds.values()]
            names = (ctypes.c_char_p * max(len(fv), 1))(*[k.encode() for k in feeds])
            tens = (_lib.gn_tensor * max(len(fv), 1))(*[f.tensor for f in fv])
            rep = ctypes.c_void_p()
            g._check(lib.gn_engines_build(g._handle(), self._backend.encode(), names, tens, len(fv),
                                          ctypes.byref(rep)), "build")
            reports.append(_lib.take_string(rep.value) if rep.value else "")
        if not reports:
            raise Error("input_fn yielded no batch", _GN_ERR_ARG)
        g._changed()
        self._built = "".join(reports)

    def save(self, output_saved_model_dir: Union[str, os.PathLike], save_gpu_specific_engines: bool = True,
             options: Any = None) -> None:
        """Writes the converted graph as a SavedModel with the input's signature
        key and its input and output keys. ``options``: a
        tf.saved_model.SaveOptions or its dict."""
        g = self._need_converted("save")
        assert self._info is not None
        del save_gpu_specific_engines   # engines built by build() are always saved
        feeds = [f"{k}={v['tensor']}" for k, v in self._info["inputs"].items()]
        fetches = [f"{k}={v['tensor']}" for k, v in self._info["outputs"].items()]
        g.save_savedmodel(output_saved_model_dir, save_options=options, feeds=feeds, fetches=fetches,
                          signature_key=self._key, tags=self._tags)

    def summary(self, line_length: int = 160, detailed: bool = True, print_fn: Any = None) -> None:
        """Prints the conversion: the parameters, the engine count, and (detailed)
        one line per engine and per node not converted, with the reason."""
        self._need_converted("summary")
        put = print_fn or print

        def out(line: str) -> None:
            put(line if len(line) <= line_length else line[:max(line_length - 3, 0)] + "...")

        out(f"grapnel conversion of {os.fspath(self._dir)} signature '{self._key}' (backend {self._backend})")
        out(f"params: {self.conversion_params}")
        out(f"engines: {self._engines}")
        if detailed:
            for text in (self._report, self._calibration, self._built):
                for line in text.splitlines():
                    out(line)

    def close(self) -> None:
        for g in (self._graph, self._source):
            if g is not None:
                g.close()
        self._graph = self._source = None

    def __enter__(self) -> "Converter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
