"""The grapnel Python package: every function, on small text graphs built
here, on the golden models (TensorFlow's outputs) and on the corpus."""
import gc
import pathlib
from typing import Dict, List, Tuple

import numpy as np
import pytest

import grapnel
from grapnel import Error

# ---- small graphs as GraphDef text ----------------------------------------------------------------


def ph(name: str, dt: str = "DT_FLOAT", shape: Tuple[int, ...] = None) -> str:
    s = ""
    if shape is not None:
        s = ' attr { key: "shape" value { shape { ' + " ".join(f"dim {{ size: {d} }}" for d in shape) + " } } }"
    return f'node {{ name: "{name}" op: "Placeholder" attr {{ key: "dtype" value {{ type: {dt} }} }}{s} }}\n'


def const(name: str, arr: np.ndarray) -> str:
    dims = " ".join(f"dim {{ size: {d} }}" for d in arr.shape)
    vals = " ".join(f"float_val: {float(v)!r}" for v in arr.reshape(-1))
    return (f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} '
            f'attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{ {dims} }} {vals} }} }} }} }}\n')


def op(name: str, kind: str, *inputs: str, dt: str = "DT_FLOAT") -> str:
    ins = " ".join(f'input: "{i}"' for i in inputs)
    return f'node {{ name: "{name}" op: "{kind}" {ins} attr {{ key: "T" value {{ type: {dt} }} }} }}\n'


RNG = np.random.default_rng(7)
W = RNG.standard_normal((5, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)


def dense_text(bias: np.ndarray = B) -> str:
    """y = relu(x @ W + b), x: [?, 5]."""
    return (ph("x", shape=(-1, 5)) + const("w", W) + const("b", bias) + op("mm", "MatMul", "x", "w")
            + op("ba", "BiasAdd", "mm", "b") + op("y", "Relu", "ba"))


def foldable_text() -> str:
    """y = x * (c1 + c2): the sum folds into one constant."""
    return (ph("x", shape=(2, 2)) + const("c1", np.full((2, 2), 1.5, np.float32))
            + const("c2", np.full((2, 2), 0.25, np.float32)) + op("s", "AddV2", "c1", "c2") + op("y", "Mul", "x", "s"))


# ---- library, dtypes -------------------------------------------------------------------------------
def test_version_and_library():
    assert grapnel.version() == grapnel.__version__
    # pyproject.toml's version, once installed, is the library's
    try:
        import importlib.metadata as md
        installed = md.version("grapnel-tf")
    except Exception:   # run from the source tree: not installed
        installed = None
    if installed is not None:
        assert installed == grapnel.version()
    assert "libgrapnel.so" in grapnel.library_path


DTYPE_CASES = [("DT_HALF", np.float16, 19), ("DT_FLOAT", np.float32, 1), ("DT_DOUBLE", np.float64, 2),
               ("DT_INT8", np.int8, 6), ("DT_INT16", np.int16, 5), ("DT_INT32", np.int32, 3),
               ("DT_INT64", np.int64, 9), ("DT_UINT8", np.uint8, 4), ("DT_UINT16", np.uint16, 17),
               ("DT_UINT32", np.uint32, 22), ("DT_UINT64", np.uint64, 23), ("DT_BOOL", np.bool_, 10),
               ("DT_COMPLEX64", np.complex64, 8)]


@pytest.mark.parametrize("dt,npd,num", DTYPE_CASES)
def test_dtype_round_trip_through_run(dt, npd, num):
    assert grapnel.dtype_from_numpy(npd) == num
    assert grapnel.dtype_to_numpy(num) == np.dtype(npd)
    with grapnel.loads(ph("x", dt) + op("y", "Identity", "x", dt=dt)) as g:
        x = (np.arange(12).reshape(3, 4) % 5).astype(npd)
        y = g.run({"x": x}, "y")
        assert y.dtype == np.dtype(npd) and y.shape == (3, 4)
        np.testing.assert_array_equal(y, x)
        # non-contiguous and scalar feeds
        np.testing.assert_array_equal(g.run({"x": x[:, ::2]}, "y"), x[:, ::2])
        s = g.run({"x": np.array(3, dtype=npd)}, "y")
        assert s.shape == () and s.dtype == np.dtype(npd) and s == np.array(3, dtype=npd)


def test_dtype_map_matches_the_library_table():
    """grapnel.DTYPES against the C list (src/opdef/dtypes.def) through the
    library: every number in the map has the library's size and NumPy name, and
    every DataType whose NumPy name numpy knows is in the map."""
    lib = grapnel._lib.lib
    for num, npd in grapnel.DTYPES.items():
        name = grapnel._lib.s(lib.gn_dtype_numpy_name(num))
        if num == 7:  # DT_STRING: object arrays of bytes, no fixed size
            assert name == "string" and lib.gn_dtype_size(num) == 0
            continue
        assert name == npd.name, num
        assert lib.gn_dtype_size(num) == npd.itemsize, name
    known = 0
    for num in range(1, 200):
        name = grapnel._lib.s(lib.gn_dtype_numpy_name(num))
        if name == "unknown":
            continue
        known += 1
        try:
            npd = np.dtype(name)
        except TypeError:  # bfloat16, qint8, float8_e5m2, resource, ...: numpy has no such dtype
            assert num not in grapnel.DTYPES or num == 7, name
            continue
        assert grapnel.DTYPES.get(num) == npd, name
    assert known == 66  # DT_FLOAT .. DT_FLOAT4_E2M1FN and their _REF types


def test_string_tensors():
    assert grapnel.dtype_from_numpy(np.dtype("S3")) == 7 and grapnel.dtype_from_numpy(object) == 7
    with grapnel.loads(ph("x", "DT_STRING") + op("y", "Identity", "x", dt="DT_STRING")) as g:
        x = np.array([[b"ab", b""], [b"xyz\0q", "caf\u00e9".encode()]], dtype=object)
        y = g.run({"x": x}, "y")
        assert y.dtype == object and y.shape == (2, 2)
        assert y.tolist() == x.tolist()
        assert g.run({"x": np.array([b"a", b"bc"])}, ["y"])[0].tolist() == [b"a", b"bc"]


def test_float16_arithmetic_matches_numpy():
    with grapnel.loads(ph("a", "DT_HALF") + ph("b", "DT_HALF") + op("y", "Mul", "a", "b", dt="DT_HALF")) as g:
        a = RNG.standard_normal((4, 6)).astype(np.float16)
        b = RNG.standard_normal((4, 6)).astype(np.float16)
        y = g.run({"a": a, "b": b}, "y")
        assert y.dtype == np.float16
        np.testing.assert_array_equal(y, a * b)


# ---- running: numerical check against numpy ------------------------------------------------------
def test_matmul_bias_relu_against_numpy():
    with grapnel.loads(dense_text()) as g:
        x = RNG.standard_normal((4, 5)).astype(np.float32)
        y, mm = g.run({"x": x}, ["y", "mm:0"])
        ref = np.maximum(x.astype(np.float64) @ W.astype(np.float64) + B, 0)
        assert y.dtype == np.float32 and y.shape == (4, 3)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mm, x.astype(np.float64) @ W, rtol=1e-5, atol=1e-6)
        assert (y >= 0).all() and (y == 0).any()   # relu did cut something
        # default fetches: the graph's outputs, as a dict
        out = g.run({"x": x})
        assert list(out) == ["y"]
        np.testing.assert_array_equal(out["y"], y)
        # feeding an inner tensor cuts the graph there
        cut = g.run({"mm": np.full((2, 3), -1.0, np.float32)}, "y")
        np.testing.assert_allclose(cut, np.maximum(-1.0 + B, 0)[None].repeat(2, 0), rtol=1e-6)


def test_run_errors_carry_the_library_message():
    with grapnel.loads(dense_text()) as g:
        with pytest.raises(Error) as e:
            g.run({"x": np.zeros((1, 5), np.float32)}, ["nope"])
        assert e.value.code == 9 and e.value.status == "not found" and "nope" in str(e.value)
        with pytest.raises(Error) as e:
            g.run({"x": np.zeros((1, 5), np.int32)}, ["y"])
        assert e.value.code == 1 and "x" in str(e.value)
        with pytest.raises(Error) as e:
            g.run({"x": np.zeros((1, 5), np.float32)}, ["y"], backend="tpu")
        assert "tpu" in str(e.value)


# A TF1 loop whose condition is always true (tests/bounds_test.c's), and a Fill of 2**40 floats.
_I32 = "attr { key: 'T' value { type: DT_INT32 } } "
FOREVER = (
    "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
    "dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: 'enter' op: 'Enter' input: 'i0' " + _I32 +
    "attr { key: 'frame_name' value { s: 'forever' } } attr { key: 'is_constant' value { b: false } } "
    "attr { key: 'parallel_iterations' value { i: 1 } } }\n"
    "node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' " + _I32 + "attr { key: 'N' value { i: 2 } } }\n"
    "node { name: 'true' op: 'Const' input: '^merge' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' "
    "value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }\n"
    "node { name: 'cond' op: 'LoopCond' input: 'true' }\n"
    "node { name: 'switch' op: 'Switch' input: 'merge' input: 'cond' " + _I32 + "}\n"
    "node { name: 'exit' op: 'Exit' input: 'switch' " + _I32 + "}\n"
    "node { name: 'body' op: 'Identity' input: 'switch:1' " + _I32 + "}\n"
    "node { name: 'next' op: 'NextIteration' input: 'body' " + _I32 + "}\n")
TERA_FILL = (
    "node { name: 'dims' op: 'Const' attr { key: 'dtype' value { type: DT_INT64 } } attr { key: 'value' value { tensor {"
    " dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: 1048576 int64_val: 1048576 } } } }\n"
    + const("v", np.array(1.0, np.float32)) +
    "node { name: 'fill' op: 'Fill' input: 'dims' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'index_type' value { type: DT_INT64 } } }\n")


def test_run_resource_limits():
    with grapnel.loads(FOREVER) as g:
        with pytest.raises(grapnel.ResourceExhaustedError) as e:
            g.run(fetches="exit", step_limit=1000)
        assert e.value.code == 11 and e.value.status == "resource limit exceeded"
        assert str(e.value) == "node 'exit' (Exit): the run reached the session's step limit of 1000 node executions"
        with pytest.raises(grapnel.ResourceExhaustedError) as e:
            g.run(fetches="exit", step_limit=grapnel.NO_LIMIT, time_limit_ms=50)
        assert str(e.value).endswith("the run went past the session's time limit of 50 ms")
    with grapnel.loads(TERA_FILL) as g:
        with pytest.raises(grapnel.ResourceExhaustedError) as e:
            g.run(fetches="fill", memory_limit_bytes=4 << 30)
        assert str(e.value) == ("node 'fill' (Fill): output 0 of 1099511627776 float32 elements (4.0 TiB) is over "
                                "the memory limit of 4.0 GiB")
        # a limit that holds: the same graph's small input runs
        assert g.run(fetches="v", memory_limit_bytes=4, step_limit=2) == np.float32(1)
        for bad in (0, -1, 1.5, True, "4G", grapnel.NO_LIMIT + 1):
            with pytest.raises(grapnel.InvalidArgumentError, match="memory_limit_bytes"):
                g.run(fetches="v", memory_limit_bytes=bad)
        with pytest.raises(grapnel.InvalidArgumentError, match="time_limit_ms=NO_LIMIT"):
            g.run(fetches="v", time_limit_ms=grapnel.NO_LIMIT)


def test_outputs_leave_anchors_out():
    c = ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { '
         'tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }\n'
         'node { name: "anchor" op: "Identity" input: "c" attr { key: "T" value { type: DT_FLOAT } } }\n')
    with grapnel.loads(ph("x") + c + 'node { name: "y" op: "Neg" input: "x" input: "^anchor" '
                       'attr { key: "T" value { type: DT_FLOAT } } }\n') as g:
        assert g.outputs() == ["y"]
    # only anchors left: they are the outputs
    with grapnel.loads(c + 'node { name: "z" op: "NoOp" input: "^anchor" }\n') as g:
        assert g.outputs() == ["anchor"]
        assert g.run() == {"anchor": np.float32(3)}


# ---- loading, errors, lifetime -----------------------------------------------------------------------
def test_load_errors(tmp_path: pathlib.Path):
    with pytest.raises(Error) as e:
        grapnel.load(tmp_path / "missing.pb")
    assert e.value.code == 4 and "missing.pb" in str(e.value)
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node { name: "a" op: "Const" \n  bogus_field: 3 }\n')
    with pytest.raises(Error) as e:
        grapnel.load(bad)
    assert e.value.code == 5 and "bad.pbtxt" in str(e.value) and "line 2" in str(e.value)
    with pytest.raises(Error) as e:
        grapnel.loads(ph("x") + op("y", "Relu", "nothere"), name="g.pbtxt")
    assert e.value.code == 6 and "nothere" in str(e.value)


def test_graph_frees_its_handle_once():
    g = grapnel.loads(dense_text())
    assert g.node_count == 6 and len(g) == 6 and not g.closed
    g.run({"x": np.ones((1, 5), np.float32)}, "y")   # a cached session, freed with the graph
    g.close()
    g.close()
    assert g.closed and repr(g) == "<grapnel.Graph closed>"
    with pytest.raises(Error) as e:
        g.node_count
    assert "closed" in str(e.value) and e.value.code == 2
    with grapnel.loads(dense_text()) as h:
        pass
    assert h.closed
    for _ in range(200):   # collected graphs free themselves
        grapnel.loads(dense_text()).run({"x": np.ones((1, 5), np.float32)}, "y")
    gc.collect()


def test_inspect_and_nodes():
    with grapnel.loads(dense_text()) as g:
        info = g.inspect()
        assert info["nodes"] == 6
        assert info["ops"] == {"BiasAdd": 1, "Const": 2, "MatMul": 1, "Placeholder": 1, "Relu": 1}
        assert info["inputs"] == [{"name": "x", "dtype": "float32", "dtype_enum": 1, "shape": (None, 5)}]
        assert info["outputs"] == ["y"]
        assert info["functions"] == {}
        assert "MatMul" in info["text"] and "6" in info["text"]
        nodes = g.nodes(outputs=True)
        assert [n["name"] for n in nodes] == ["x", "w", "b", "mm", "ba", "y"]
        assert nodes[4]["inputs"] == ["mm", "b"]
        assert nodes[5]["outputs"] == [{"dtype": "float", "shape": (None, 3)}]
        assert g.to_dot().startswith("digraph")
        g.validate()


def test_save_and_serialize_round_trip(tmp_path: pathlib.Path):
    with grapnel.loads(dense_text()) as g:
        g.save(tmp_path / "m.pb")
        g.save(tmp_path / "m.pbtxt")
        g.save(tmp_path / "m.bin", format="text")
        assert (tmp_path / "m.pbtxt").read_bytes() == g.serialize("text")
        assert (tmp_path / "m.bin").read_bytes() == g.serialize("text")
        assert (tmp_path / "m.pb").read_bytes() == g.serialize()
        x = RNG.standard_normal((2, 5)).astype(np.float32)
        want = g.run({"x": x}, "y")
        for f in ("m.pb", "m.pbtxt"):
            with grapnel.load(tmp_path / f) as h:
                assert h.serialize() == g.serialize()
                np.testing.assert_array_equal(h.run({"x": x}, "y"), want)
        with grapnel.loads(g.serialize()) as h:
            assert len(h) == len(g)
        with pytest.raises(Error) as e:
            g.save(tmp_path / "no" / "dir" / "m.pb")
        assert e.value.code == 4
        with pytest.raises(Error):
            g.serialize("yaml")


def test_save_with_fsync(tmp_path: pathlib.Path):
    """set_fsync changes whether the disk is waited for, not the bytes."""
    with grapnel.loads(dense_text()) as g:
        g.set_fsync(True)
        g.save(tmp_path / "durable.pb")
        g.set_fsync(False)
        g.save(tmp_path / "plain.pb")
        assert (tmp_path / "durable.pb").read_bytes() == (tmp_path / "plain.pb").read_bytes() == g.serialize()


# ---- options and optimize ------------------------------------------------------------------------------
TF_KEYS = ["layout_optimizer", "constant_folding", "shape_optimization", "remapping", "arithmetic_optimization",
           "dependency_optimization", "loop_optimization", "function_optimization", "debug_stripper",
           "disable_model_pruning", "scoped_allocator_optimization", "pin_to_host_optimization",
           "implementation_selector", "auto_mixed_precision", "disable_meta_optimizer", "min_graph_nodes"]


def test_options_round_trip():
    keys = grapnel.option_keys()
    assert keys[:len(TF_KEYS)] == TF_KEYS
    assert set(grapnel.option_help()) == set(keys) and all(grapnel.option_help().values())
    defaults = grapnel.default_options()
    assert list(defaults) == keys
    assert defaults["constant_folding"] == "DEFAULT" and defaults["min_graph_nodes"] == 0
    assert defaults["disable_model_pruning"] is False and defaults["layout.policy"] == "grapnel"
    # what TensorFlow's get_experimental_options() would print for these settings
    d = {"constant_folding": True, "layout_optimizer": False, "min_graph_nodes": -1,
         "auto_mixed_precision": "AGGRESSIVE", "layout.policy": "NCHW", "amp.allowlist_add": ["MatMul", "Conv2D"]}
    got = grapnel.parse_options(d)
    assert got == {"layout_optimizer": False, "constant_folding": True, "auto_mixed_precision": "AGGRESSIVE",
                   "disable_model_pruning": False, "disable_meta_optimizer": False, "min_graph_nodes": -1,
                   "layout.policy": "NCHW", "amp.allowlist_add": "MatMul,Conv2D"}
    assert grapnel.parse_options(got) == got                         # dict -> text -> dict is stable
    assert grapnel.parse_options(grapnel.options_text(got)) == got
    assert grapnel.parse_options("constant_folding=on,min_graph_nodes=-1") == grapnel.parse_options(
        {"constant_folding": True, "min_graph_nodes": -1})
    assert grapnel.parse_options(None) == {"disable_model_pruning": False, "disable_meta_optimizer": False}


def test_option_errors_name_the_key():
    with pytest.raises(Error) as e:
        grapnel.parse_options({"constant_foldng": True})
    assert e.value.code == 1 and "constant_foldng" in str(e.value) and "did you mean 'constant_folding'" in str(e.value)
    with pytest.raises(Error) as e:
        grapnel.parse_options({"constant_folding": "SOMETIMES"})
    assert "constant_folding" in str(e.value) and "SOMETIMES" in str(e.value)
    with pytest.raises(Error):
        grapnel.parse_options({"constant_folding": 1.5})
    with pytest.raises(Error):
        grapnel.parse_options(["constant_folding"])


def _pass_names(report: Dict) -> List[str]:
    return [p["pass"] for p in report["passes"]]


def test_optimize_folds_and_reports():
    with grapnel.loads(foldable_text()) as g:
        x = RNG.standard_normal((2, 2)).astype(np.float32)
        before = g.run({"x": x}, "y")
        np.testing.assert_allclose(before, x * 1.75, rtol=1e-6)
        ref = g.clone()
        report = g.optimize({"constant_folding": True, "min_graph_nodes": -1}, fetches=["y"])
        assert set(report) >= {"total_micros", "passes", "events", "notes", "text"}
        folded = [p for p in report["passes"] if p["pass"] == "constfold" and p["changed"]]
        assert folded and folded[0]["nodes_after"] < folded[0]["nodes_before"]
        assert "constfold" in report["text"]
        assert len(g) < len(ref) and "AddV2" not in g.inspect()["ops"]
        np.testing.assert_array_equal(g.run({"x": x}, "y"), before)   # the session was rebuilt
        v = ref.verify(g, feeds={"x": x})
        assert v["y"]["match"] and v["y"]["max_abs_err"] == 0.0
        ref.close()
    with grapnel.loads(foldable_text()) as g:
        r = g.optimize({"constant_folding": False, "min_graph_nodes": -1}, fetches=["y"])
        assert "constfold" not in _pass_names(r) and "AddV2" in g.inspect()["ops"]
    with grapnel.loads(foldable_text()) as g:   # below min_graph_nodes (0 means 4? no: 5 nodes): runs
        r = g.optimize({"disable_meta_optimizer": True})
        assert r["passes"] == [] and len(g) == 5


def test_optimize_errors():
    with grapnel.loads(foldable_text()) as g:
        with pytest.raises(Error) as e:
            g.optimize({"arithmetic_optimisation": True})
        assert "arithmetic_optimization" in str(e.value)
        with pytest.raises(Error) as e:
            g.optimize(target="tpu")
        assert "tpu" in str(e.value)
        g.optimize(target="gpu:sm_80", fetches=["y"])   # a GPU target only changes placement decisions


def test_list_passes():
    text = grapnel.list_passes()
    assert "constfold" in text and "constant_folding" in text


# ---- verify ------------------------------------------------------------------------------------------------
def test_verify_reports_the_error_per_fetch():
    with grapnel.loads(dense_text()) as a, grapnel.loads(dense_text(B + 0.5)) as b:
        x = RNG.standard_normal((3, 5)).astype(np.float32)
        r = a.verify(b, feeds={"x": x}, fetches=["ba", "y"])
        assert list(r) == ["ba", "y"]
        assert not r["ba"]["match"] and r["ba"]["max_abs_err"] == pytest.approx(0.5, abs=1e-6)
        assert r["ba"]["n_diff"] == 9 and r["ba"]["dtype"] == "float32" and r["ba"]["shape"] == (3, 3)
        ya, yb = a.run({"x": x}, "y"), b.run({"x": x}, "y")
        assert r["y"]["max_abs_err"] == pytest.approx(float(np.abs(ya - yb).max()), abs=1e-7)
        assert r["y"]["rel_l2_err"] == pytest.approx(float(np.linalg.norm(ya - yb) / np.linalg.norm(ya)), rel=1e-5)
        assert r["y"]["tol"] == 1e-5
        # random feeds: unknown batch dim set by dim=, same draw for both graphs
        r2 = a.verify(a.clone(), dim=7, seed=3)
        assert r2 == {"y": {"match": True, "max_abs_err": 0.0, "rel_l2_err": 0.0, "tol": 1e-5, "n_diff": 0,
                            "n_nan_mismatch": 0, "why": "", "dtype": "float32", "shape": (7, 3)}}
        loose = a.verify(b, feeds={"x": x}, fetches=["ba"], tol=1.0)
        assert loose["ba"]["match"] and loose["ba"]["tol"] == 1.0
        feeds = a.random_feeds(seed=3, dim=7)
        assert list(feeds) == ["x"] and feeds["x"].shape == (7, 5) and feeds["x"].dtype == np.float32
        assert (np.abs(feeds["x"]) <= 1).all()
        np.testing.assert_array_equal(feeds["x"], a.random_feeds(seed=3, dim=7)["x"])


# ---- golden models: TensorFlow's own outputs ----------------------------------------------------------------
def _manifest(golden: pathlib.Path) -> List[Dict]:
    models, cur = [], None
    for line in (golden / "manifest.txt").read_text().splitlines():
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        if w[0] == "model":
            cur = {"name": w[1], "feeds": [], "fetches": []}
        elif w[0] in ("graph", "tol"):
            cur[w[0]] = w[1]
        elif w[0] in ("feed", "fetch"):
            cur[w[0] + ("es" if w[0] == "fetch" else "s")].append((w[1], w[2]))
        elif w[0] == "end":
            models.append(cur)
    return models


GOLDEN_FAST = ["cnn_bn_residual", "lstm", "ds_cnn_s", "tfonnx_fc_layers", "tfonnx_gru"]


@pytest.mark.parametrize("name", GOLDEN_FAST)
def test_golden_models_match_tensorflow(name, golden, request):
    m = next(m for m in _manifest(golden) if m["name"] == name)
    kind, rel = m["graph"].split("/", 1)
    if kind == "corpus":
        path = request.getfixturevalue("corpus") / rel
    else:
        path = golden.parent / m["graph"]
    tol = float(m["tol"])
    feeds = {t: np.load(golden / f) for t, f in m["feeds"]}
    fetches = [t for t, _ in m["fetches"]]
    with grapnel.load(path) as g:
        got = g.run(feeds, fetches)
        for (t, f), y in zip(m["fetches"], got):
            ref = np.load(golden / f)
            assert y.dtype == ref.dtype and y.shape == ref.shape
            err = np.linalg.norm((y - ref).astype(np.float64)) / max(np.linalg.norm(ref.astype(np.float64)), 1e-30)
            assert err <= tol, f"{t}: rel L2 {err} > {tol}"
        opt = g.clone()
        report = opt.optimize({"constant_folding": True, "layout_optimizer": False}, fetches=fetches,
                              feeds=list(feeds))
        assert report["passes"] and len(opt) <= len(g)
        res = g.verify(opt, feeds=feeds, fetches=fetches)
        assert all(r["match"] for r in res.values()), res
        opt.close()


# ---- the corpus: every model loads, inspects, optimizes and round-trips ------------------------------------
def _corpus_models(root: pathlib.Path) -> List[pathlib.Path]:
    files = [p for p in root.glob("*/*") if p.is_file() and (p.name.endswith((".pb", ".pbtxt", ".pbtxt.gz")))]
    dirs = [p for p in root.glob("*/*") if p.is_dir() and any((p / n).exists() for n in
                                                               ("saved_model.pb", "saved_model.pbtxt"))]
    return sorted(files + dirs)


def test_corpus_models(corpus):
    models = _corpus_models(corpus)
    assert len(models) >= 30
    n_savedmodels = 0
    for path in models:
        with grapnel.load(path) as g:
            n = len(g)
            info = g.inspect()
            assert info["nodes"] == n > 0 and sum(info["ops"].values()) == n, path
            data = g.serialize()
            with grapnel.loads(data, name=str(path)) as h:
                assert len(h) == n and h.serialize() == data, path
            opt = g.clone()
            report = opt.optimize(fetches=info["outputs"] or None)
            main = [p for p in report["passes"] if p["item"] == "main"]
            if n >= 4:   # below min_graph_nodes' default of 4 nothing runs
                assert main and main[0]["nodes_before"] == n and main[-1]["nodes_after"] == len(opt), path
            opt.validate()
            opt.close()
            # engine conversion: a dry run changes nothing; the real one leaves a valid graph
            seg = g.clone()
            keep = [x["name"] if isinstance(x, dict) else x
                    for x in list(info["outputs"] or []) + list(info.get("inputs") or [])]
            dry = seg.segment(fetches=keep, dry_run=True)
            assert len(seg) == n and "engine(s) (dry run)" in dry["report"], path
            res = seg.segment(fetches=keep)
            assert res["engines"] == dry["engines"], path
            seg.validate()
            seg.close()
            n_savedmodels += path.is_dir()
    assert n_savedmodels >= 10


def test_savedmodel_tags(corpus):
    d = corpus / "tensorflow__tensorflow" / "tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123"
    with grapnel.load(d, tags="serve") as g, grapnel.load(d, tags=["serve"]) as h:
        assert len(g) == len(h) > 0
    with pytest.raises(Error) as e:
        grapnel.load(d, tags="train,gpu")
    assert e.value.code == 9


def test_corpus_verify_with_random_feeds(corpus):
    """fc-layers: optimized vs original on random inputs (unknown batch = 4)."""
    with grapnel.load(corpus / "onnx__tensorflow-onnx" / "tests__models__fc-layers__frozen.pb") as g:
        opt = g.clone()
        opt.optimize({"remapping": True})
        res = g.verify(opt, dim=4)
        assert list(res) == ["output"] and res["output"]["match"] and res["output"]["shape"][0] == 4
        assert res["output"]["max_abs_err"] <= 1e-4
        opt.close()


# ---- SavedModels: signatures, variables, freezing, writing ----------------------------------------------------
needs_savedmodel = pytest.mark.skipif(not grapnel.has_savedmodel(), reason="library built without savedmodel.h")
needs_save = pytest.mark.skipif(not grapnel.has_savedmodel_save(), reason="library built without save.h")
KWS = "mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model"
FC = "onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb"


@needs_savedmodel
def test_signatures_variables_and_freeze(corpus):
    with grapnel.load(corpus / KWS) as sm:
        assert sm.tags == "serve"
        sigs = sm.signatures()
        assert sorted(sigs) == ["__saved_model_init_op", "serving_default"]
        sd = sigs["serving_default"]
        assert sd["method"] == "tensorflow/serving/predict"
        assert sd["inputs"] == {"input_1": {"tensor": "serving_default_input_1:0", "dtype": "float32",
                                            "shape": (None, 49, 10, 1)}}
        assert sd["outputs"]["dense"]["shape"] == (None, 12)
        variables = sm.variables()
        assert len(variables) == 141 and all(v["bytes"] > 0 for v in variables)
        with sm.freeze() as frozen, sm.freeze("serving_default") as again:
            ops = frozen.inspect()["ops"]
            assert "VarHandleOp" not in ops and "ReadVariableOp" not in ops and "Const" in ops
            x = RNG.standard_normal((2, 49, 10, 1)).astype(np.float32)
            y = frozen.run({sd["inputs"]["input_1"]["tensor"]: x}, sd["outputs"]["dense"]["tensor"])
            assert y.shape == (2, 12) and y.dtype == np.float32
            np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)   # a softmax classifier
            assert frozen.serialize() == again.serialize()
        with pytest.raises(Error) as e:
            sm.freeze("no_such_signature")
        assert "no_such_signature" in str(e.value)
    with grapnel.loads(dense_text()) as g:
        assert g.signatures() == {} and g.tags == ""
        with pytest.raises(Error) as e:
            g.freeze()
        assert e.value.code == 1


@needs_save
def test_save_options_round_trip():
    defaults = grapnel.parse_save_options(None)
    assert defaults == {"namespace_whitelist": None, "save_debug_info": False, "function_aliases": None,
                        "experimental_debug_stripper": False, "experimental_io_device": None,
                        "experimental_variable_policy": "none", "experimental_custom_gradients": True,
                        "experimental_image_format": False, "experimental_skip_saver": False,
                        "experimental_sharding_callback": None, "extra_tags": None}
    d = {"save_debug_info": True, "namespace_whitelist": ["Custom"], "function_aliases": {"serve_fn": "f"},
         "experimental_variable_policy": "save_variable_devices",
         "experimental_sharding_callback": "MaxShardSizePolicy(1000)", "extra_tags": ["gpu"]}
    got = grapnel.parse_save_options(d)
    assert got == {**defaults, **d}
    assert grapnel.parse_save_options(got) == got
    with pytest.raises(Error) as e:
        grapnel.parse_save_options({"save_debug_inf": True})
    assert "save_debug_inf" in str(e.value)


@needs_save
def test_save_savedmodel_from_graphdef(corpus, tmp_path: pathlib.Path):
    with grapnel.load(corpus / FC) as g:
        out = tmp_path / "fc"
        g.save_savedmodel(out, {"save_debug_info": True}, feeds=["X"], fetches=["output"])
        assert (out / "saved_model.pb").is_file() and (out / "debug" / "saved_model_debug_info.pb").is_file()
        with grapnel.load(out) as sm:
            assert sm.tags == "serve"
            assert sm.signatures() == {"serving_default": {
                "method": "tensorflow/serving/predict",
                "inputs": {"X": {"tensor": "X:0", "dtype": "float32", "shape": (None, 784)}},
                "outputs": {"output": {"tensor": "output:0", "dtype": "float32", "shape": (None, 10)}}}}
            x = RNG.standard_normal((3, 784)).astype(np.float32)
            np.testing.assert_array_equal(sm.run({"X": x}, "output"), g.run({"X": x}, "output"))
        with pytest.raises(Error) as e:   # not empty any more
            g.save_savedmodel(out, fetches=["output"])
        assert e.value.code == 4
        with pytest.raises(Error) as e:
            g.save_savedmodel(tmp_path / "bad", fetches=["nope"])
        assert "nope" in str(e.value) and not (tmp_path / "bad").exists()


@needs_save
@needs_savedmodel
def test_save_savedmodel_keeps_variables(corpus, tmp_path: pathlib.Path):
    with grapnel.load(corpus / KWS) as sm:
        sm.save_savedmodel(tmp_path / "kws", {"extra_tags": ["gpu"]})
        with grapnel.load(tmp_path / "kws", tags=["serve", "gpu"]) as again:
            assert [(v["name"], v["shape"]) for v in again.variables()] == [(v["name"], v["shape"])
                                                                             for v in sm.variables()]
            with sm.freeze() as a, again.freeze() as b:
                res = a.verify(b, dim=2)
                assert all(r["match"] and r["max_abs_err"] == 0.0 for r in res.values()), res


# ---- engine conversion (segment) ----------------------------------------------------------------------------
def test_conversion_params():
    p = grapnel.conversion_params()
    assert p == {"max_workspace_size_bytes": 1 << 30, "precision_mode": "FP32", "minimum_segment_size": 3,
                 "maximum_cached_engines": 1, "use_calibration": True, "allow_build_at_runtime": True}
    assert grapnel.conversion_params({"precision_mode": "fp16"})["precision_mode"] == "FP16"
    with pytest.raises(Error, match="minimum_segment_size should be positive or -1"):
        grapnel.conversion_params({"minimum_segment_size": 0})


def test_segment_golden_fp32_and_fp16(golden):
    m = next(m for m in _manifest(golden) if m["name"] == "cnn_bn_residual")
    feeds = {t: np.load(golden / f) for t, f in m["feeds"]}
    fetches = [t for t, _ in m["fetches"]]
    with grapnel.load(golden.parent / m["graph"]) as g:
        ref = g.run(feeds, fetches)[0]
        dry = g.clone()
        r = dry.segment(fetches=fetches, feeds=list(feeds), dry_run=True)
        assert r["engines"] == 1 and "(dry run)" in r["report"] and len(dry) == len(g)
        for prec, tol in (("FP32", 1e-5), ("FP16", 1e-2)):
            c = g.clone()
            r = c.segment({"precision_mode": prec}, fetches=fetches, feeds=list(feeds))
            assert r["engines"] == 1
            assert "Grapnel>EngineOp" in [n["op"] for n in c.nodes()]
            y = c.run(feeds, fetches)[0]
            err = np.linalg.norm((y - ref).astype(np.float64)) / np.linalg.norm(ref.astype(np.float64))
            assert err <= tol, f"{prec}: rel L2 {err}"
            if prec == "FP16":
                assert err > 0  # the engine ran in float16
            c.close()
        dry.close()


def test_segment_golden_int8_calibrated(golden):
    m = next(m for m in _manifest(golden) if m["name"] == "cnn_bn_residual")
    feeds = {t: np.load(golden / f) for t, f in m["feeds"]}
    fetches = [t for t, _ in m["fetches"]]
    rng = np.random.RandomState(5)
    name, x = next(iter(feeds.items()))
    with grapnel.load(golden.parent / m["graph"]) as g:
        ref = g.run(feeds, fetches)[0]
        c = g.clone()
        assert c.segment({"precision_mode": "INT8"}, fetches=fetches, feeds=list(feeds))["engines"] == 1
        batches = [{name: rng.standard_normal(x.shape).astype(np.float32)} for _ in range(4)] + [feeds]
        rep = c.calibrate(batches)
        assert rep.startswith("engine GrapnelEngineOp_000_000: ") and "over 5 batch(es)" in rep
        y = c.run(feeds, fetches)[0]
        err = np.linalg.norm((y - ref).astype(np.float64)) / np.linalg.norm(ref.astype(np.float64))
        assert 0 < err <= 0.02, f"INT8: rel L2 {err}"  # tests/int8_test.c states 0.02 for this model
        c.close()
