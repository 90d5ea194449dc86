"""grapnel at TensorFlow's level: SavedModel signatures as ``loaded.signatures``,
TensorFlow's own option objects read by attribute, the Converter in
TrtGraphConverterV2's flow, the exception classes, benchmark/repeat.

TensorFlow is not needed: its objects are faked below by plain classes with
the attribute names, defaults and types of TensorFlow 2.21's (checked against
``tf.saved_model.SaveOptions.__slots__``, ``VariablePolicy.__members__``,
``trt_convert.TrtConversionParams._fields`` and its defaults,
``trt_convert.TrtPrecisionMode``, ``sharding_policies.MaxShardSizePolicy``)."""
import collections
import enum
import errno
import importlib.abc
import pathlib
import pickle
import sys
from collections.abc import Mapping
from typing import Any, Dict

import numpy as np
import pytest

import grapnel
from grapnel import Error, InvalidArgumentError, NotFoundError

# ---- TensorFlow's objects, faked with their attribute names ------------------------------------------------


class VariablePolicy(enum.Enum):
    """tf.saved_model.experimental.VariablePolicy: an Enum whose NONE is None."""
    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"

    @classmethod
    def from_obj(cls, obj: Any) -> "VariablePolicy":
        if obj is None:
            return cls.NONE
        if isinstance(obj, cls):
            return obj
        return cls(obj.lower())


class MaxShardSizePolicy:
    """tf.train.experimental.MaxShardSizePolicy: its size in ``max_shard_size``."""

    def __init__(self, max_shard_size: int):
        self.max_shard_size = max_shard_size


class ShardByTaskPolicy:
    """tf.train.experimental.ShardByTaskPolicy: no attributes."""


class SaveOptions:
    """tf.saved_model.SaveOptions: __slots__, no __dict__; function_aliases
    defaults to {}, the policy is a VariablePolicy."""
    __slots__ = ("namespace_whitelist", "save_debug_info", "function_aliases", "experimental_debug_stripper",
                 "experimental_io_device", "experimental_variable_policy", "experimental_custom_gradients",
                 "experimental_image_format", "experimental_skip_saver", "experimental_sharding_callback",
                 "extra_tags")

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None, experimental_variable_policy=None,
                 experimental_custom_gradients=True, experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases if function_aliases else dict()
        self.experimental_debug_stripper = experimental_debug_stripper
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = VariablePolicy.from_obj(experimental_variable_policy)
        self.experimental_custom_gradients = experimental_custom_gradients
        self.experimental_image_format = experimental_image_format
        self.experimental_skip_saver = experimental_skip_saver
        self.experimental_sharding_callback = experimental_sharding_callback
        self.extra_tags = extra_tags


#: trt_convert.TrtConversionParams: a namedtuple, TensorFlow's fields, order and defaults
TrtConversionParams = collections.namedtuple("TrtConversionParams", [
    "max_workspace_size_bytes", "precision_mode", "minimum_segment_size", "maximum_cached_engines",
    "use_calibration", "allow_build_at_runtime"])
TrtConversionParams.__new__.__defaults__ = (1 << 30, "FP32", 3, 1, True, True)


class TrtPrecisionMode:
    """trt_convert.TrtPrecisionMode: class attributes that are plain str."""
    FP32 = "FP32"
    FP16 = "FP16"
    INT8 = "INT8"

    @staticmethod
    def supported_precision_modes():
        precisions = [TrtPrecisionMode.FP32, TrtPrecisionMode.FP16, TrtPrecisionMode.INT8]
        return precisions + [p.lower() for p in precisions]


class Function:
    """A tf.function: callable, with its name in ``name``."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return args


# ---- models ---------------------------------------------------------------------------------------------
HP2 = ("tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__"
       "saved_model_half_plus_two_tf2_cpu__00000123")   # y = x/2 + 2 (and /2 + 3), six signatures
KWS = "mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model"
FC = "onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb"
HP2_KEYS = ["classify_x2_to_y3", "classify_x_to_y", "regress_x2_to_y3", "regress_x_to_y", "regress_x_to_y2",
            "serving_default"]
CONV_FIELDS = ("max_workspace_size_bytes, precision_mode, minimum_segment_size, maximum_cached_engines, "
               "use_calibration, allow_build_at_runtime")
SAVE_FIELDS = ", ".join(grapnel.SAVE_OPTION_FIELDS)

needs_savedmodel = pytest.mark.skipif(not grapnel.has_savedmodel(), reason="library built without savedmodel.h")
needs_save = pytest.mark.skipif(not grapnel.has_savedmodel_save(), reason="library built without save.h")


def f32(*v: float) -> np.ndarray:
    return np.array(v, np.float32)


def kws_input(batch: int = 2, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, 49, 10, 1)).astype(np.float32)


@pytest.fixture
def freezes(monkeypatch) -> Dict[str, int]:
    """Counts Graph.freeze calls by signature key (None: the default)."""
    counts: Dict[str, int] = collections.Counter()
    real = grapnel.Graph.freeze

    def counting(self, signature=None):
        counts[signature] += 1
        return real(self, signature)

    monkeypatch.setattr(grapnel.Graph, "freeze", counting)
    return counts


# ---- 1. signatures ----------------------------------------------------------------------------------------------
@needs_savedmodel
def test_signatures_is_a_mapping_by_key(corpus):
    with grapnel.load(corpus / HP2) as sm:
        sigs = sm.signatures
        assert isinstance(sigs, Mapping)
        assert list(sigs) == HP2_KEYS and len(sigs) == 6 and sorted(sigs.keys()) == HP2_KEYS
        assert "serving_default" in sigs and "__saved_model_init_op" not in sigs   # the init op is no signature
        sd = sigs["serving_default"]
        assert isinstance(sd, grapnel.SignatureFunction) and sd.name == "serving_default"
        assert sd.inputs == {"x": {"tensor": "serving_default_x:0", "dtype": "float32", "shape": (1,)}}
        assert sd.outputs == {"y": {"tensor": "StatefulPartitionedCall_5:0", "dtype": "float32", "shape": (1,)}}
        assert sd.structured_input_signature == ((), {"x": {"dtype": "float32", "shape": (1,)}})
        assert sd.structured_outputs == {"y": {"dtype": "float32", "shape": (1,)}}
        assert repr(sd) == "<grapnel.SignatureFunction 'serving_default' inputs=['x'] outputs=['y']>"
        assert sigs["classify_x_to_y"].inputs["inputs"] == {"tensor": "classify_x_to_y_inputs:0", "dtype": "string",
                                                            "shape": (None,)}
        # called with keyword arguments by input key, a dict by output key
        out = sd(x=f32(1.0))
        assert list(out) == ["y"] and out["y"].dtype == np.float32
        np.testing.assert_array_equal(out["y"], f32(2.5))           # 1/2 + 2
        np.testing.assert_array_equal(sd(x=[3.0])["y"], f32(3.5))   # anything numpy converts
        out = sigs["classify_x2_to_y3"](inputs=f32(1.0))
        assert list(out) == ["scores"]
        np.testing.assert_array_equal(out["scores"], f32(3.5))      # 1/2 + 3
        np.testing.assert_array_equal(sigs["regress_x2_to_y3"](inputs=f32(4.0))["outputs"], f32(5.0))
        # calling the mapping: every description, the init op included
        assert sorted(sigs()) == ["__saved_model_init_op"] + HP2_KEYS
        assert sigs()["serving_default"]["method"] == "tensorflow/serving/predict"


@needs_savedmodel
def test_a_signature_is_frozen_once_on_first_call(corpus, freezes):
    with grapnel.load(corpus / HP2) as sm:
        assert sum(freezes.values()) == 0   # loading and listing freeze nothing
        sd = sm.signatures["serving_default"]
        assert sum(freezes.values()) == 0
        for k in range(3):
            np.testing.assert_array_equal(sd(x=f32(2.0 * k))["y"], f32(k + 2.0))
        # a new lookup of the same key and Graph.run reuse the frozen graph
        np.testing.assert_array_equal(sm.signatures["serving_default"](x=f32(6.0))["y"], f32(5.0))
        np.testing.assert_array_equal(sm.run({"x": f32(8.0)}, "y"), f32(6.0))
        assert dict(freezes) == {"serving_default": 1}
        sd.graph()
        assert dict(freezes) == {"serving_default": 1}
        # another signature: its own freeze, once
        for _ in range(2):
            np.testing.assert_array_equal(sm.signatures["regress_x2_to_y3"](inputs=f32(2.0))["outputs"], f32(4.0))
        assert dict(freezes) == {"serving_default": 1, "regress_x2_to_y3": 1}
        # the graph changed: frozen again on the next call, once
        sm.optimize({"constant_folding": True})
        for _ in range(2):
            np.testing.assert_array_equal(sd(x=f32(1.0))["y"], f32(2.5))
        assert dict(freezes) == {"serving_default": 2, "regress_x2_to_y3": 1}


@needs_savedmodel
def test_graph_run_on_a_savedmodel_takes_keys_or_tensors(corpus):
    with grapnel.load(corpus / HP2) as sm:
        out = sm.run({"x": f32(3.0)})
        assert list(out) == ["y"]
        np.testing.assert_array_equal(out["y"], f32(3.5))
        np.testing.assert_array_equal(sm.run({"x": f32(3.0)}, "y"), f32(3.5))
        y, = sm.run({"serving_default_x:0": f32(3.0)}, ["StatefulPartitionedCall_5:0"])
        np.testing.assert_array_equal(y, f32(3.5))
        np.testing.assert_array_equal(sm.run({"inputs": f32(3.0)}, "scores", signature="classify_x2_to_y3"),
                                      f32(4.5))


@needs_savedmodel
def test_signature_errors_name_the_key(corpus):
    with grapnel.load(corpus / HP2) as sm:
        sigs = sm.signatures
        listing = ", ".join(HP2_KEYS)
        with pytest.raises(KeyError) as e:
            sigs["serving_defualt"]
        assert isinstance(e.value, Error) and e.value.code == 9
        assert str(e.value) == f"no signature 'serving_defualt'; did you mean 'serving_default'? (signatures: {listing})"
        with pytest.raises(KeyError) as e:
            sigs["__saved_model_init_op"]
        assert str(e.value) == f"no signature '__saved_model_init_op' (signatures: {listing})"
        assert sigs.get("nope") is None
        sd = sigs["serving_default"]
        with pytest.raises(ValueError) as e:
            sd(xx=f32(1.0))
        assert isinstance(e.value, InvalidArgumentError)
        assert str(e.value) == "signature 'serving_default' has no input 'xx'; did you mean 'x'? (inputs: x)"
        with pytest.raises(ValueError) as e:
            sd()
        assert str(e.value) == "signature 'serving_default': missing input 'x' (inputs: x)"
        with pytest.raises(ValueError) as e:
            sd(f32(1.0))
        assert str(e.value) == ("signature 'serving_default' takes keyword arguments only, by input key (x), "
                                "as TensorFlow's signatures do")
        with pytest.raises(ValueError) as e:
            sm.run({"xx": f32(1.0)})
        assert str(e.value) == ("'xx' is neither an input key of signature 'serving_default' nor a tensor of its "
                                "frozen graph; did you mean 'x'? (input keys: x)")
        with pytest.raises(ValueError) as e:
            sm.run({"x": f32(1.0)}, "yy")
        assert str(e.value) == ("'yy' is neither an output key of signature 'serving_default' nor a tensor of its "
                                "frozen graph; did you mean 'y'? (output keys: y)")
        with pytest.raises(KeyError) as e:
            sm.run({"x": f32(1.0)}, signature="serving")
        assert str(e.value) == f"no signature 'serving'; did you mean 'serving_default'? (signatures: {listing})"


def test_a_graphdef_has_no_signatures(corpus):
    with grapnel.load(corpus / FC) as g:
        assert len(g.signatures) == 0 and list(g.signatures) == [] and g.signatures() == {}
        with pytest.raises(KeyError) as e:
            g.signatures["serving_default"]
        assert str(e.value) == "no signature 'serving_default' (signatures: none)"
        with pytest.raises(ValueError) as e:
            g.run({"X": np.ones((1, 784), np.float32)}, signature="serving_default")
        assert str(e.value) == "signature='serving_default': the graph is not a SavedModel"
        # a feed or fetch the graph lacks: the nearest input or output, and the list (as grapnel run says it)
        with pytest.raises(Error) as e:
            g.run({"Xs": np.ones((1, 784), np.float32)}, "output")
        assert str(e.value) == "no tensor 'Xs' in the graph; did you mean 'X'? (its inputs: X)" and e.value.code == 9
        with pytest.raises(Error) as e:
            g.run({"X": np.ones((1, 784), np.float32)}, ["outptu"])
        assert str(e.value) == "no tensor 'outptu' in the graph; did you mean 'output'? (its outputs: output)"


# ---- 2. TensorFlow's objects, read by attribute -------------------------------------------------------------------
class _NoTensorFlow(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.tried = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "tensorflow":
            self.tried.append(name)
            raise ImportError(f"no {name} in this test")
        return None


@pytest.fixture
def no_tensorflow(monkeypatch):
    """TensorFlow made unimportable; the test checks nothing tried to import it."""
    finder = _NoTensorFlow()
    monkeypatch.setattr(sys, "meta_path", [finder] + sys.meta_path)
    for name in [n for n in sys.modules if n.split(".")[0] == "tensorflow"]:
        monkeypatch.delitem(sys.modules, name)
    yield finder
    assert finder.tried == []


DEFAULT_SAVE = {"namespace_whitelist": None, "save_debug_info": False, "function_aliases": None,
                "experimental_debug_stripper": False, "experimental_io_device": None,
                "experimental_variable_policy": "none", "experimental_custom_gradients": True,
                "experimental_image_format": False, "experimental_skip_saver": False,
                "experimental_sharding_callback": None, "extra_tags": None}


@needs_save
def test_save_options_object(no_tensorflow):
    assert grapnel.parse_save_options(SaveOptions()) == DEFAULT_SAVE == grapnel.parse_save_options(None)
    opts = SaveOptions(namespace_whitelist=["Custom"], save_debug_info=np.bool_(True),
                       function_aliases={"serve": Function("serve_fn")}, experimental_io_device="/job:localhost",
                       experimental_variable_policy=VariablePolicy.SAVE_VARIABLE_DEVICES,
                       experimental_sharding_callback=MaxShardSizePolicy(np.int64(1000)), extra_tags=["gpu"])
    assert grapnel.parse_save_options(opts) == {
        **DEFAULT_SAVE, "namespace_whitelist": ["Custom"], "save_debug_info": True,
        "function_aliases": {"serve": "serve_fn"}, "experimental_io_device": "/job:localhost",
        "experimental_variable_policy": "save_variable_devices",
        "experimental_sharding_callback": "MaxShardSizePolicy(1000)", "extra_tags": ["gpu"]}
    opts = SaveOptions(experimental_variable_policy="EXPAND_DISTRIBUTED_VARIABLES",
                       experimental_sharding_callback=ShardByTaskPolicy(), experimental_skip_saver=True)
    assert grapnel.parse_save_options(opts) == {
        **DEFAULT_SAVE, "experimental_variable_policy": "expand_distributed_variables",
        "experimental_sharding_callback": "ShardByTaskPolicy()", "experimental_skip_saver": True}
    # the same values in a dict: the enum member, the policy object, a plain function
    d = {"experimental_variable_policy": VariablePolicy.EXPAND_DISTRIBUTED_VARIABLES,
         "experimental_sharding_callback": MaxShardSizePolicy(7), "function_aliases": {"f": f32}}
    assert grapnel.parse_save_options(d) == {**DEFAULT_SAVE, "experimental_variable_policy": "expand_distributed_variables",
                                             "experimental_sharding_callback": "MaxShardSizePolicy(7)",
                                             "function_aliases": {"f": "f32"}}


@needs_save
def test_save_option_errors_quote_the_users_value():
    # an object or a dict: the value given, no offset into text the user never wrote
    with pytest.raises(ValueError) as e:
        grapnel.parse_save_options(SaveOptions(save_debug_info="yes"))
    assert str(e.value) == "save options: 'save_debug_info' takes True or False (got 'yes')"
    with pytest.raises(ValueError) as e:
        grapnel.parse_save_options(SaveOptions(extra_tags=3))
    assert str(e.value) == "save options: 'extra_tags' takes a list of strings or None (got 3)"
    with pytest.raises(ValueError) as e:
        grapnel.parse_save_options({"save_debug_info": "yes"})
    assert str(e.value) == "save options: 'save_debug_info' takes True or False (got 'yes')"
    # the user's own text: the offset into it
    with pytest.raises(ValueError) as e:
        grapnel.parse_save_options("{'save_debug_info': 'yes'}")
    assert str(e.value) == "save options: at offset 20: 'save_debug_info' takes True or False"
    with pytest.raises(ValueError) as e:
        grapnel.parse_save_options({"experimental_variable_policy": "save_devices"})
    assert str(e.value) == ("save options: 'experimental_variable_policy': 'save_devices' is not one of None, "
                            "'save_variable_devices', 'expand_distributed_variables'")
    with pytest.raises(ValueError) as e:
        grapnel.parse_save_options(42)
    assert str(e.value) == "save options must be a dict or a tf.saved_model.SaveOptions, not int"


def test_conversion_params_objects(no_tensorflow):
    assert grapnel.conversion_params(TrtConversionParams()) == dict(TrtConversionParams()._asdict())
    p = TrtConversionParams(precision_mode=TrtPrecisionMode.FP16, minimum_segment_size=np.int32(5),
                            max_workspace_size_bytes=np.int64(1 << 20), use_calibration=np.bool_(False))
    assert grapnel.conversion_params(p) == {"max_workspace_size_bytes": 1 << 20, "precision_mode": "FP16",
                                            "minimum_segment_size": 5, "maximum_cached_engines": 1,
                                            "use_calibration": False, "allow_build_at_runtime": True}
    for mode in TrtPrecisionMode.supported_precision_modes():
        assert grapnel.conversion_params(TrtConversionParams(precision_mode=mode))["precision_mode"] == mode.upper()
    assert grapnel.conversion_params({"precision_mode": np.str_("fp16")})["precision_mode"] == "FP16"
    with pytest.raises(ValueError) as e:
        grapnel.conversion_params(TrtConversionParams(precision_mode="int4"))
    assert str(e.value) == "precision_mode 'int4' is not one of FP32, FP16, INT8 (either case)"
    with pytest.raises(ValueError) as e:
        grapnel.conversion_params({"minimum_segment_size": "three"})
    assert str(e.value) == "minimum_segment_size: 'three' is not an integer"
    with pytest.raises(ValueError) as e:
        grapnel.conversion_params([3])
    assert str(e.value) == "conversion params must be a dict or a TrtConversionParams, not list"


def test_segment_takes_a_conversion_params_namedtuple(corpus, no_tensorflow):
    with grapnel.load(corpus / FC) as g:
        as_dict = g.segment({"minimum_segment_size": 2}, fetches=["output"], feeds=["X"], dry_run=True)
        as_tuple = g.segment(TrtConversionParams(minimum_segment_size=np.int64(2)), fetches=["output"], feeds=["X"],
                             dry_run=True)
        assert as_tuple == as_dict and as_dict["engines"] == 1


def test_numpy_scalars_in_optimizer_options(no_tensorflow):
    got = grapnel.parse_options({"constant_folding": np.bool_(True), "min_graph_nodes": np.int64(-1),
                                 "layout.policy": np.str_("NCHW"), "meta_optimizer_iterations": np.int32(2)})
    assert got == grapnel.parse_options({"constant_folding": True, "min_graph_nodes": -1, "layout.policy": "NCHW",
                                         "meta_optimizer_iterations": 2})
    assert got["constant_folding"] is True and got["min_graph_nodes"] == -1 and got["layout.policy"] == "NCHW"
    assert grapnel.parse_options({"min_graph_nodes": np.array(4)})["min_graph_nodes"] == 4   # a 0-d array
    with pytest.raises(ValueError) as e:
        grapnel.parse_options({"min_graph_nodes": np.float64(1.5)})
    assert str(e.value) == "option 'min_graph_nodes': value 1.5 of type float is not a bool, int or str"


def _option_keys() -> str:
    return ", ".join(grapnel.option_keys())


# every dictionary: (what, call, the exact message)
SUGGESTIONS = [
    ("optimizer options, dict", lambda: grapnel.parse_options({"constant_foldng": True}),
     lambda: f"unknown option 'constant_foldng'; did you mean 'constant_folding'? (valid keys: {_option_keys()})"),
    ("optimizer options, text", lambda: grapnel.parse_options("{'remap.polcy': 'grapnel'}"),
     lambda: f"unknown option 'remap.polcy'; did you mean 'remap.policy'? (valid keys: {_option_keys()})"),
    ("conversion params, dict", lambda: grapnel.conversion_params({"precison_mode": "FP16"}),
     lambda: f"unknown conversion parameter 'precison_mode'; did you mean 'precision_mode'? (valid: {CONV_FIELDS})"),
    ("conversion params, text", lambda: grapnel.conversion_params("{'minimum_segment_sise': 2}"),
     lambda: (f"unknown conversion parameter 'minimum_segment_sise'; did you mean 'minimum_segment_size'? "
              f"(valid: {CONV_FIELDS})")),
    ("Converter conversion_params", lambda: grapnel.Converter(input_saved_model_dir="unused",
                                                              conversion_params={"use_calbration": False}),
     lambda: f"unknown conversion parameter 'use_calbration'; did you mean 'use_calibration'? (valid: {CONV_FIELDS})"),
]
SAVE_SUGGESTIONS = [
    ("save options, dict", lambda: grapnel.parse_save_options({"namespace_whitelst": ["a"]}),
     lambda: f"unknown SaveOptions field 'namespace_whitelst'; did you mean 'namespace_whitelist'? (valid: {SAVE_FIELDS})"),
    ("save options, text", lambda: grapnel.parse_save_options("{'save_debug_inf': True}"),
     lambda: f"unknown SaveOptions field 'save_debug_inf'; did you mean 'save_debug_info'? (valid: {SAVE_FIELDS})"),
]


@pytest.mark.parametrize("what,call,want", SUGGESTIONS + [pytest.param(*s, marks=needs_save) for s in SAVE_SUGGESTIONS],
                         ids=[s[0] for s in SUGGESTIONS + SAVE_SUGGESTIONS])
def test_misspelt_keys_get_the_nearest_one(what, call, want):
    with pytest.raises(InvalidArgumentError) as e:
        call()
    assert isinstance(e.value, ValueError) and e.value.code == 1
    assert str(e.value) == want()


# ---- 3. Converter ---------------------------------------------------------------------------------------------------
@needs_savedmodel
@needs_save
def test_converter_flow(corpus, tmp_path: pathlib.Path, no_tensorflow):
    x = kws_input()
    with grapnel.load(corpus / KWS) as sm:
        ref = sm.signatures["serving_default"](input_1=x)["dense"]
    params = TrtConversionParams(precision_mode=TrtPrecisionMode.FP32, minimum_segment_size=np.int64(3))
    with grapnel.Converter(input_saved_model_dir=str(corpus / KWS), conversion_params=params) as c:
        assert c.conversion_params == dict(TrtConversionParams()._asdict())
        fn = c.convert()
        assert isinstance(fn, grapnel.SignatureFunction) and fn.name == "serving_default"
        assert list(fn.inputs) == ["input_1"] and list(fn.outputs) == ["dense"]
        assert fn.graph().inspect()["ops"]["Grapnel>EngineOp"] == 1
        y = fn(input_1=x)["dense"]
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)   # FP32 engines: the same arithmetic
        lines = _summary(c, line_length=1000)
        assert lines[:3] == [f"grapnel conversion of {corpus / KWS} signature 'serving_default' (backend cpu)",
                             f"params: {c.conversion_params}", "engines: 1"]
        assert any(s.startswith("engine GrapnelEngineOp_000_000: ") for s in lines)
        assert lines[-1] == "1 engine(s), 0 segment(s) left native"
        short = _summary(c, line_length=60)
        assert len(short) == len(lines) and all(len(s) <= 60 for s in short)
        assert short[0] == lines[0][:57] + "..." and short[2] == "engines: 1"
        assert _summary(c, line_length=1000, detailed=False) == lines[:3]
        assert _summary(c) == [s if len(s) <= 160 else s[:157] + "..." for s in lines]   # TensorFlow's 160
        # build: the engines made ahead of time for the shapes input_fn yields
        c.build(lambda: iter([(x,)]))
        assert _summary(c)[-1] == "GrapnelEngineOp_000_000: [2,49,10,1] (1 engine cached for it, at most 1)"
        np.testing.assert_allclose(fn(input_1=x)["dense"], ref, rtol=1e-5, atol=1e-6)
        # save with a SaveOptions object; the signature, its keys and the engine come back
        out = tmp_path / "converted"
        c.save(str(out), options=SaveOptions(save_debug_info=True))
        assert (out / "saved_model.pb").is_file() and (out / "debug" / "saved_model_debug_info.pb").is_file()
    with grapnel.load(out) as back:
        assert list(back.signatures) == ["serving_default"]
        sd = back.signatures["serving_default"]
        assert sd.inputs == {"input_1": {"tensor": "serving_default_input_1:0", "dtype": "float32",
                                         "shape": (None, 49, 10, 1)}}
        assert list(sd.outputs) == ["dense"]
        assert back.inspect()["ops"]["Grapnel>EngineOp"] == 1
        np.testing.assert_array_equal(sd(input_1=x)["dense"], y)


def _summary(c: grapnel.Converter, **kw: Any):
    lines = []
    c.summary(print_fn=lines.append, **kw)
    return lines


@needs_savedmodel
def test_converter_int8_calibration(corpus):
    x = kws_input()
    with grapnel.load(corpus / KWS) as sm:
        ref = sm.signatures["serving_default"](input_1=x)["dense"]
    # the individual keyword arguments, as TrtGraphConverterV2 takes them; batches as tuple, dict or list
    with grapnel.Converter(input_saved_model_dir=corpus / KWS, precision_mode=TrtPrecisionMode.INT8) as c:
        assert c.conversion_params["precision_mode"] == "INT8" and c.conversion_params["use_calibration"] is True
        calls = []

        def calibration_input_fn():
            calls.append(1)
            yield (kws_input(seed=2),)
            yield {"input_1": kws_input(seed=3)}
            yield [x]

        fn = c.convert(calibration_input_fn)
        assert calls == [1]
        assert _summary(c)[-1] == "engine GrapnelEngineOp_000_000: 263 tensor range(s) over 3 batch(es)"
        y = fn(input_1=x)["dense"]
        err = np.linalg.norm((y - ref).astype(np.float64)) / np.linalg.norm(ref.astype(np.float64))
        assert 0 < err <= 0.025, f"INT8: rel L2 {err}"   # the engine ran in int8 (0.021 measured on these batches)


@needs_savedmodel
def test_converter_errors(corpus, tmp_path: pathlib.Path):
    kws = corpus / KWS
    with pytest.raises(ValueError) as e:
        grapnel.Converter()
    assert str(e.value) == "input_saved_model_dir is required"
    with pytest.raises(ValueError) as e:
        grapnel.Converter(input_saved_model_dir=kws, precision_mode="FP16", conversion_params=TrtConversionParams())
    assert str(e.value) == "give conversion_params or precision_mode, not both"
    with pytest.raises(ValueError) as e:
        grapnel.Converter(input_saved_model_dir=kws, conversion_params=TrtConversionParams(minimum_segment_size=0))
    assert str(e.value) == "minimum_segment_size should be positive or -1 (to disable main graph conversion), got 0"
    c = grapnel.Converter(input_saved_model_dir=kws, precision_mode="INT8")
    for call, what in ((lambda: c.save(tmp_path / "x"), "save"), (lambda: c.build(lambda: iter([])), "build"),
                       (c.summary, "summary")):
        with pytest.raises(Error) as e:
            call()
        assert str(e.value) == f"{what}: call convert() first" and e.value.code == 2
    with pytest.raises(ValueError) as e:
        c.convert()
    assert str(e.value) == "precision_mode INT8 with use_calibration needs calibration_input_fn"
    with pytest.raises(ValueError) as e:
        c.convert(lambda: iter([]))
    assert str(e.value) == "calibration_input_fn yielded no batch"
    with pytest.raises(ValueError) as e:
        grapnel.Converter(input_saved_model_dir=kws).convert(lambda: iter([(kws_input(),)]))
    assert str(e.value) == "calibration_input_fn is only for precision_mode INT8 with use_calibration"
    with pytest.raises(KeyError) as e:
        grapnel.Converter(input_saved_model_dir=kws, input_saved_model_signature_key="serving").convert()
    assert str(e.value) == "no signature 'serving'; did you mean 'serving_default'? (signatures: serving_default)"
    with pytest.raises(FileNotFoundError) as e:
        grapnel.Converter(input_saved_model_dir=tmp_path / "nope").convert()
    assert str(e.value) == f"{tmp_path / 'nope'}: No such file or directory"
    with grapnel.Converter(input_saved_model_dir=kws) as c:
        c.convert()
        with pytest.raises(Error) as e:
            c.convert()
        assert str(e.value) == "convert() was already called"
        with pytest.raises(ValueError) as e:
            c.build(lambda: iter([(kws_input(), kws_input())]))
        assert str(e.value) == "input_fn: a batch of 2 array(s) for 1 input(s) (input_1)"
        with pytest.raises(ValueError) as e:
            c.build(lambda: iter([{"input_2": kws_input()}]))
        assert str(e.value) == "signature 'serving_default' has no input 'input_2'; did you mean 'input_1'? (inputs: input_1)"
        with pytest.raises(ValueError) as e:
            c.build(lambda: iter([]))
        assert str(e.value) == "input_fn yielded no batch"


# ---- 4. exceptions ----------------------------------------------------------------------------------------------------
def test_exception_classes(tmp_path: pathlib.Path):
    missing = tmp_path / "missing.pb"
    with pytest.raises(FileNotFoundError) as e:
        grapnel.load(missing)
    err = e.value
    assert isinstance(err, NotFoundError) and isinstance(err, Error) and isinstance(err, OSError)
    assert str(err) == f"{missing}: No such file or directory"
    assert err.errno == errno.ENOENT and err.filename == str(missing) and err.code == 4
    assert err.status == "input/output error"
    with pytest.raises(ValueError) as e:
        grapnel.parse_options({"constant_folding": "SOMETIMES"})
    assert type(e.value) is InvalidArgumentError and e.value.code == 1 and e.value.status == "invalid argument"
    # other failures stay plain grapnel.Error
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node { name: "a" op: "Const" \n  bogus_field: 3 }\n')
    with pytest.raises(Error) as e:
        grapnel.load(bad)
    assert type(e.value) is Error and not isinstance(e.value, (ValueError, OSError)) and e.value.code == 5
    # made from a code, the class follows it; pickling keeps class, message and code
    assert type(Error("x", 1)) is InvalidArgumentError and type(Error("x", 5)) is Error
    assert type(Error("a.pb: No such file or directory", 4)) is NotFoundError
    assert type(Error("a.pb: Permission denied", 4)) is Error
    for exc in (err, Error("bad key", 1), Error("parse", 5)):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and str(back) == str(exc) and back.code == exc.code
    assert pickle.loads(pickle.dumps(err)).filename == str(missing)


# ---- 5. benchmark / repeat --------------------------------------------------------------------------------------------
def _check_timing(t: Dict[str, Any], runs: int, warmup: int) -> None:
    assert list(t) == ["runs", "warmup", "latency_ms", "throughput_per_s"]
    assert t["runs"] == runs and t["warmup"] == warmup
    lat = t["latency_ms"]
    assert list(lat) == ["min", "median", "p90", "max", "mean"]
    assert 0 < lat["min"] <= lat["median"] <= lat["p90"] <= lat["max"] and lat["min"] <= lat["mean"] <= lat["max"]
    assert t["throughput_per_s"] == pytest.approx(1e3 / lat["mean"], rel=1e-9)   # runs over the timed total


@needs_savedmodel
def test_benchmark_counts_its_runs(corpus, monkeypatch):
    calls = []
    real = grapnel.Graph._run
    monkeypatch.setattr(grapnel.Graph, "_run", lambda self, *a: calls.append(1) or real(self, *a))
    with grapnel.load(corpus / HP2) as sm:
        _check_timing(sm.benchmark({"x": f32(1.0)}, repeat=5, warmup=2), 5, 2)
        assert len(calls) == 7
        _check_timing(sm.signatures["regress_x2_to_y3"].benchmark(repeat=np.int64(3), warmup=np.int32(0),
                                                                   inputs=f32(1.0)), 3, 0)
        assert len(calls) == 10
        with pytest.raises(ValueError) as e:
            sm.benchmark({"x": f32(1.0)}, repeat=0)
        assert str(e.value) == "repeat=0: expected a positive integer"
        with pytest.raises(ValueError) as e:
            sm.signatures["serving_default"].benchmark(repeat=2, warmup=-1, x=f32(1.0))
        assert str(e.value) == "warmup=-1: expected a non-negative integer"
        with pytest.raises(ValueError) as e:
            sm.benchmark({"xx": f32(1.0)}, repeat=1)
        assert str(e.value) == "signature 'serving_default' has no input 'xx'; did you mean 'x'? (inputs: x)"
    with grapnel.load(corpus / FC) as g:   # a GraphDef: inputs not fed get random values
        calls.clear()
        _check_timing(g.benchmark(fetches="output", repeat=4, warmup=1), 4, 1)
        assert len(calls) == 5
        with pytest.raises(ValueError) as e:
            g.benchmark(repeat=True)
        assert str(e.value) == "repeat=True: expected a positive integer"


# ---- the fakes against TensorFlow's own classes (where TensorFlow is installed) ------------------------------
def test_fakes_have_tensorflows_attributes():
    tf = pytest.importorskip("tensorflow")
    from tensorflow.python.compiler.tensorrt import trt_convert
    from tensorflow.python.checkpoint.sharding import sharding_policies
    real = tf.saved_model.SaveOptions()
    assert type(real).__slots__ == SaveOptions.__slots__ and not hasattr(real, "__dict__")
    fake = SaveOptions()

    def plain(v):
        return (type(v).__name__, v.name, v.value) if hasattr(type(v), "__members__") else v

    assert {k: plain(getattr(real, k)) for k in SaveOptions.__slots__} == {
        k: plain(getattr(fake, k)) for k in SaveOptions.__slots__}
    assert [(k, v.value) for k, v in tf.saved_model.experimental.VariablePolicy.__members__.items()] == [
        (k, v.value) for k, v in VariablePolicy.__members__.items()]
    assert trt_convert.TrtConversionParams._fields == TrtConversionParams._fields
    assert trt_convert.TrtConversionParams() == TrtConversionParams()
    assert trt_convert.TrtPrecisionMode.supported_precision_modes() == TrtPrecisionMode.supported_precision_modes()
    assert vars(sharding_policies.MaxShardSizePolicy(10)) == vars(MaxShardSizePolicy(10))
    assert vars(sharding_policies.ShardByTaskPolicy()) == vars(ShardByTaskPolicy())
    # and the real objects read as the fakes do
    real = tf.saved_model.SaveOptions(save_debug_info=True, namespace_whitelist=["Custom"],
                                      experimental_variable_policy="save_variable_devices",
                                      function_aliases={"serve": tf.function(lambda x: x)})
    got = grapnel.parse_save_options(real)
    assert got["experimental_variable_policy"] == "save_variable_devices" and got["save_debug_info"] is True
    assert got["namespace_whitelist"] == ["Custom"] and got["function_aliases"] == {"serve": "<lambda>"}
    p = trt_convert.TrtConversionParams(precision_mode=trt_convert.TrtPrecisionMode.FP16)
    assert grapnel.conversion_params(p) == grapnel.conversion_params(TrtConversionParams(precision_mode="FP16"))
