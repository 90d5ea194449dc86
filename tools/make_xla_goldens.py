"""Writes small graphs of TensorFlow's XLA ops (tf2xla), their inputs and
TensorFlow's outputs to tests/data/xla/ (read by tests/kernels_xla_test.c).

Run with the TensorFlow virtualenv (tools/tfvenv.sh):
    $(tools/tfvenv.sh) tools/make_xla_goldens.py
Each case NAME writes NAME.pb (the GraphDef of a tf.function: placeholders
x0, x1, ..., results out0, out1, ..., the computations the ops name in its
function library), NAME_in<k>.npy and NAME_out<k>.npy: what TensorFlow
computes for the function on those inputs (TensorFlow compiles the XLA ops
with XLA). Inputs come from a seeded generator: the files are the same on
every run."""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from tensorflow.compiler.tf2xla.python import xla
from tensorflow.compiler.xla import xla_data_pb2

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "xla")
rng = np.random.default_rng(4321)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def fn2(dtype, body):
    """A computation of two scalars, as TensorFlow's xla wrappers take it."""
    spec = tf.TensorSpec([], dtype)
    return tf.function(body).get_concrete_function(spec, spec)


def save(name, fn, ins, jit=False):
    """jit: compute TensorFlow's outputs with the whole function compiled by XLA
    (ops that have no kernel outside a compiled cluster)."""
    sig = [tf.TensorSpec(a.shape, tf.as_dtype(a.dtype), name="x%d" % k) for k, a in enumerate(ins)]

    def wrapped(*xs):
        r = fn(*xs)
        if not isinstance(r, (list, tuple)):
            r = [r]
        return [tf.identity(t, name="out%d" % k) for k, t in enumerate(r)]

    cf = tf.function(wrapped).get_concrete_function(*sig)
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(cf.graph.as_graph_def().SerializeToString())
    run = tf.function(wrapped, jit_compile=True).get_concrete_function(*sig) if jit else cf
    outs = run(*[tf.constant(a) for a in ins])
    for k, a in enumerate(ins):
        np.save(os.path.join(OUT, "%s_in%d.npy" % (name, k)), a)
    for k, t in enumerate(outs):
        np.save(os.path.join(OUT, "%s_out%d.npy" % (name, k)), t.numpy())


def save_graph(name, fn, ins):
    """Only the GraphDef: a graph grapnel must refuse (its computation is not one
    of the forms that run), so there is no output to compare."""
    sig = [tf.TensorSpec(a.shape, tf.as_dtype(a.dtype), name="x%d" % k) for k, a in enumerate(ins)]
    cf = tf.function(lambda *xs: tf.identity(fn(*xs)[0], name="out0")).get_concrete_function(*sig)
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(cf.graph.as_graph_def().SerializeToString())


def gdims(offset, collapsed, start_map, ivd):
    d = xla_data_pb2.GatherDimensionNumbers()
    d.offset_dims.extend(offset)
    d.collapsed_slice_dims.extend(collapsed)
    d.start_index_map.extend(start_map)
    d.index_vector_dim = ivd
    return d


def sdims(window, inserted, to_operand, ivd):
    d = xla_data_pb2.ScatterDimensionNumbers()
    d.update_window_dims.extend(window)
    d.inserted_window_dims.extend(inserted)
    d.scatter_dims_to_operand_dims.extend(to_operand)
    d.index_vector_dim = ivd
    return d


def ddims(lc, rc, lb, rb):
    d = xla_data_pb2.DotDimensionNumbers()
    d.lhs_contracting_dimensions.extend(lc)
    d.rhs_contracting_dimensions.extend(rc)
    d.lhs_batch_dimensions.extend(lb)
    d.rhs_batch_dimensions.extend(rb)
    return d


def cdims(n_spatial, lhs, rhs, out):
    """ConvolutionDimensionNumbers from layout strings such as "NHWC", "HWIO",
    "NHWC" (N batch, C feature, I/O kernel features, other letters spatial)."""
    d = xla_data_pb2.ConvolutionDimensionNumbers()
    d.input_batch_dimension = lhs.index("N")
    d.input_feature_dimension = lhs.index("C")
    d.input_spatial_dimensions.extend(i for i, ch in enumerate(lhs) if ch not in "NC")
    d.kernel_input_feature_dimension = rhs.index("I")
    d.kernel_output_feature_dimension = rhs.index("O")
    d.kernel_spatial_dimensions.extend(i for i, ch in enumerate(rhs) if ch not in "IO")
    d.output_batch_dimension = out.index("N")
    d.output_feature_dimension = out.index("C")
    d.output_spatial_dimensions.extend(i for i, ch in enumerate(out) if ch not in "NC")
    assert len(d.input_spatial_dimensions) == n_spatial
    return d


def main():
    os.makedirs(OUT, exist_ok=True)
    # dynamic update slice: in range, clamped (start past the end), int32
    save("dus", lambda x, u, i: xla.dynamic_update_slice(x, u, i), [f32(4, 6), f32(2, 3), np.array([1, 2], np.int32)])
    save("dus_clamp", lambda x, u, i: xla.dynamic_update_slice(x, u, i),
         [f32(3, 4, 5), f32(1, 2, 5), np.array([7, -3, 2], np.int64)])
    save("dus_i32", lambda x, u, i: xla.dynamic_update_slice(x, u, i),
         [rng.integers(-99, 99, (5, 3)).astype(np.int32), rng.integers(-99, 99, (2, 3)).astype(np.int32),
          np.array([2, 0], np.int32)])
    # dynamic slice: clamped starts; the sizes are a constant (XLA needs them static)
    save("dslice", lambda x, i: xla.dynamic_slice(x, i, tf.constant([2, 3, 2])),
         [f32(5, 6, 4), np.array([4, -1, 1], np.int32)])
    # pad: negative low padding crops, interior padding
    save("pad", lambda x, v: xla.pad(x, v, tf.constant([1, -1]), tf.constant([2, 0]), tf.constant([1, 2])),
         [f32(3, 4), np.float32(0.5)])
    # gather: rows by index (jnp.take), and 2-D points of a [4,5,3] operand
    save("gather_rows", lambda x, i: xla.gather(x, i, gdims([1], [0], [0], 1), [1, 4]),
         [f32(5, 4), np.array([[3], [0], [4], [3], [9]], np.int32)])
    save("gather_points", lambda x, i: xla.gather(x, i, gdims([2], [0, 1], [0, 1], 2), [1, 1, 3]),
         [f32(4, 5, 3), np.array([[[1, 2], [3, 4]], [[0, 0], [2, -1]]], np.int64)])
    # scatter: add (duplicates) and replace
    add = fn2(tf.float32, lambda a, b: a + b)
    rep = fn2(tf.float32, lambda a, b: b)
    idx = np.array([[1], [3], [1]], np.int32)
    save("scatter_add", lambda x, i, u: xla.scatter(x, i, u, add, sdims([1], [0], [0], 1)), [f32(5, 3), idx, f32(3, 3)])
    save("scatter_replace", lambda x, i, u: xla.scatter(x, i, u, rep, sdims([1], [0], [0], 1)),
         [f32(5, 3), np.array([[4], [0]], np.int32), f32(2, 3)])
    # dot_general: batched, and with the lhs contracting dim first
    save("dot_batch", lambda a, b: xla.dot_general(a, b, ddims([2], [1], [0], [0]), use_v2=True),
         [f32(2, 3, 4), f32(2, 4, 5)])
    save("dot_t", lambda a, b: xla.dot_general(a, b, ddims([0], [1], [], []), use_v2=True), [f32(6, 3), f32(4, 6)])
    # reduce: sum, max, int32 mul
    save("reduce_sum", lambda x: xla.reduce(x, tf.constant(0.0), [1], add), [f32(3, 4, 5)])
    mx = fn2(tf.float32, lambda a, b: tf.maximum(a, b))
    save("reduce_max", lambda x: xla.reduce(x, tf.constant(-np.inf, tf.float32), [0, 2], mx), [f32(3, 4, 5)])
    mul = fn2(tf.int32, lambda a, b: a * b)
    save("reduce_prod_i32", lambda x: xla.reduce(x, tf.constant(1), [0], mul),
         [rng.integers(-3, 4, (4, 5)).astype(np.int32)])
    # sort: along the last dim; variadic by descending keys with values riding along
    save("sort", lambda x: xla.sort(x), [f32(3, 7)])
    gt = tf.function(lambda a, b, c, d: a > b).get_concrete_function(
        tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32),
        tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.int32))
    keys = np.round(f32(2, 6) * 2).astype(np.float32)   # ties: stability shows
    save("variadic_sort", lambda k, v: xla.variadic_sort([k, v], 1, gt, True),
         [keys, rng.integers(0, 99, (2, 6)).astype(np.int32)])
    # einsum, sharding, optimization barrier
    save("einsum", lambda a, b: xla.einsum(a, b, "abc,cd->abd"), [f32(2, 3, 4), f32(4, 5)])
    save("sharding", lambda x: xla.sharding(x, sharding=xla_data_pb2.OpSharding(
        type=xla_data_pb2.OpSharding.REPLICATED).SerializeToString()) * 2.0, [f32(3, 2)])
    save("barrier", lambda x, y: xla.optimization_barrier(x, y), [f32(2, 2), f32(3)])
    # dynamic dimension sizes: a dynamic size is the valid prefix (what TensorFlow
    # returns, and what a reduction sees); the full size and its removal are identities
    save("dyn_set", lambda x: xla.set_dynamic_dimension_size(x, 0, 3), [f32(5, 2)], jit=True)
    save("dyn_sum", lambda x: tf.reduce_sum(xla.set_dynamic_dimension_size(x, 1, 2), axis=1), [f32(3, 4)], jit=True)
    save("dyn_remove", lambda x: xla.remove_dynamic_dimension_size(xla.set_dynamic_dimension_size(x, 1, 4), 1),
         [f32(3, 4)], jit=True)
    # variadic reduce: a sum and a max at once, and one operand (as XlaReduce)
    add_max = tf.function(lambda a, b, c, d: (a + c, tf.maximum(b, d))).get_concrete_function(
        *[tf.TensorSpec([], tf.float32)] * 4)
    save("vreduce", lambda x, y: xla.variadic_reduce([x, y], [tf.constant(0.0), tf.constant(-np.inf)], [1], add_max),
         [f32(3, 4, 2), f32(3, 4, 2)])
    imin = tf.function(lambda a, b: tf.minimum(a, b)).get_concrete_function(*[tf.TensorSpec([], tf.int32)] * 2)
    save("vreduce_i32", lambda x: xla.variadic_reduce([x], [tf.constant(1000)], [0, 1], imin),
         [rng.integers(-50, 50, (4, 5)).astype(np.int32)])
    # reduce window: max pool 3x3 stride 2 SAME-style padding; sum with base and window dilation
    save("rwin_max", lambda x: xla.reduce_window(x, tf.constant(-np.inf, tf.float32), mx, [1, 3, 3, 1],
                                                 [1, 2, 2, 1], padding=[(0, 0), (1, 1), (0, 1), (0, 0)]),
         [f32(2, 7, 6, 3)])
    save("rwin_sum", lambda x: xla.reduce_window(x, tf.constant(0.0), add, [2, 3], [1, 2], base_dilations=[2, 1],
                                                 window_dilations=[1, 2], padding=[(1, 0), (2, 1)]), [f32(4, 9)])
    # select and scatter: the max-pool gradient (select GreaterEqual, scatter Add)
    ge = fn2(tf.float32, lambda a, b: a >= b)
    save("sas", lambda x, s: xla.select_and_scatter(x, [1, 3, 3, 1], [1, 2, 2, 1], [[0, 0], [1, 1], [0, 1], [0, 0]],
                                                    s, tf.constant(0.0), ge, add),
         [f32(2, 7, 6, 3), f32(2, 4, 3, 3)])
    ties = np.round(f32(6, 6)).astype(np.float32)   # ties: the first element of a window wins
    save("sas_ties", lambda x, s: xla.select_and_scatter(x, [2, 2], [2, 2], [[0, 0], [0, 0]], s, tf.constant(0.0),
                                                         ge, add), [ties, f32(3, 3)])
    # conv: NHWC/HWIO with strides, padding and dilations; NCHW/OIHW grouped; lhs dilation
    # (a transposed conv) with bfloat16 inputs accumulated into float32
    conv = lambda dn, s, p, ld, rd, g=1, pet=None: (lambda a, b: xla.conv(
        a, b, s, p, ld, rd, dn, feature_group_count=g, preferred_element_type=pet, use_v2=True))
    save("conv_nhwc", conv(cdims(2, "NHWC", "HWIO", "NHWC"), [2, 1], [[1, 1], [0, 2]], [1, 1], [1, 2]),
         [f32(2, 7, 8, 3), f32(3, 3, 3, 4)])
    save("conv_group", conv(cdims(2, "NCHW", "OIHW", "NCHW"), [1, 1], [[0, 0], [1, 1]], [1, 1], [1, 1], g=2),
         [f32(1, 4, 5, 5), f32(6, 2, 3, 3)])
    lhsdil = conv(cdims(1, "NWC", "WIO", "NCW"), [1], [[2, 2]], [2], [1], pet=tf.float32)
    save("conv_lhsdil", lambda a, b: lhsdil(tf.cast(a, tf.bfloat16), tf.cast(b, tf.bfloat16)),
         [f32(2, 5, 3), f32(3, 3, 2)])
    # refused: a variadic reducer whose first result is a difference
    sub_max = tf.function(lambda a, b, c, d: (a - c, tf.maximum(b, d))).get_concrete_function(
        *[tf.TensorSpec([], tf.float32)] * 4)
    save_graph("bad_vreduce", lambda x, y: xla.variadic_reduce([x, y], [tf.constant(0.0), tf.constant(0.0)], [1],
                                                               sub_max), [f32(3, 4), f32(3, 4)])


if __name__ == "__main__":
    main()
