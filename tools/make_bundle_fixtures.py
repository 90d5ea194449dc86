#!/usr/bin/env python3
"""Tensor-bundle fixtures for tests/bundle_test.c, written and read by TensorFlow.

    PY=$(tools/tfvenv.sh)
    $PY tools/make_bundle_fixtures.py write   # TF-written bundles
    $PY tools/make_bundle_fixtures.py verify  # TF reads ours

`write` makes, under tests/data/bundle/:
  partitioned/model.*   TF1 Saver: two variables split by fixed_size_partitioner
                        (axis 0 and axis 1) plus a plain one (sliced entries)
  sharded/ckpt.*        TF2 Checkpoint saved with MaxShardSizePolicy: several data
                        shards, string variables, half/double/bool/int32 values
and for each a `<name>.values` file: what tf.train.load_checkpoint reports.

`verify` reads tests/data/bundle/ours/ours.* -- a bundle written by grapnel's
writer (bundle_test regenerates it byte for byte and checks it matches) -- with
tf.train.load_checkpoint and with tf.raw_ops.RestoreV2, and records the values
in ours.values.

.values format, one tensor per line, sorted by key:
    key <TAB> dtype number <TAB> dims joined by ',' (empty for a scalar) <TAB> data
where data is the hex of the little-endian element bytes for fixed-size dtypes,
or the hex of each string joined by ',' for DT_STRING.
"""
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "bundle")


def line(key, value, dtype):
    arr = np.asarray(value, dtype=object if dtype == tf.string else None)
    dims = ",".join(str(d) for d in arr.shape)
    if dtype == tf.string:
        data = ",".join(x.hex() for x in arr.reshape(-1))
    else:
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes().hex()
    return "%s\t%d\t%s\t%s\n" % (key, dtype.as_datatype_enum, dims, data)


def dump_values(prefix, out):
    r = tf.train.load_checkpoint(prefix)
    keys = sorted(r.get_variable_to_shape_map().keys())
    dts = r.get_variable_to_dtype_map()
    with open(out, "w") as f:
        for k in keys:
            f.write(line(k, r.get_tensor(k), dts[k]))


def write_partitioned():
    d = os.path.join(ROOT, "partitioned")
    os.makedirs(d, exist_ok=True)
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        full = {
            "rows": np.arange(21, dtype=np.float32).reshape(7, 3) * 0.5,
            "cols": np.arange(10, dtype=np.int64).reshape(2, 5) * 1000 - 3,
        }
        a = v1.get_variable("rows", shape=[7, 3], dtype=tf.float32,
                            partitioner=v1.fixed_size_partitioner(3, axis=0), initializer=v1.zeros_initializer())
        b = v1.get_variable("cols", shape=[2, 5], dtype=tf.int64,
                            partitioner=v1.fixed_size_partitioner(2, axis=1), initializer=v1.zeros_initializer())
        v1.get_variable("plain", initializer=tf.constant([1.5, -2.25], dtype=tf.float64))
        assigns = []
        for pv, name in ((a, "rows"), (b, "cols")):
            for part in pv:
                info = part._get_save_slice_info()
                sl = tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape))
                assigns.append(part.assign(full[name][sl]))
        saver = v1.train.Saver()
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            s.run(assigns)
            saver.save(s, os.path.join(d, "model"), write_meta_graph=False, write_state=False)
    dump_values(os.path.join(d, "model"), os.path.join(ROOT, "partitioned.values"))


def write_sharded():
    d = os.path.join(ROOT, "sharded")
    os.makedirs(d, exist_ok=True)
    m = tf.Module()
    m.f = tf.Variable(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
    m.h = tf.Variable(np.array([0.5, -1.0, 65504.0], dtype=np.float16))
    m.dd = tf.Variable(np.array([[1e300, -2.5]], dtype=np.float64))
    m.i = tf.Variable(np.array([7, -8, 2147483647], dtype=np.int32))
    m.flag = tf.Variable(np.array([True, False, True]))
    m.s = tf.Variable(tf.constant([b"", b"a", b"hello\x00world", b"x" * 300]))
    m.s0 = tf.Variable(tf.constant(b"scalar"))
    opts = tf.train.CheckpointOptions(
        experimental_sharding_callback=tf.train.experimental.MaxShardSizePolicy(max_shard_size=400))
    ck = tf.train.Checkpoint(m=m)
    path = ck.write(os.path.join(d, "ckpt"), options=opts)
    dump_values(path, os.path.join(ROOT, "sharded.values"))


def verify_ours():
    prefix = os.path.join(ROOT, "ours", "ours")
    dump_values(prefix, os.path.join(ROOT, "ours.values"))
    # and through the op a restore runs
    r = tf.train.load_checkpoint(prefix)
    keys = sorted(r.get_variable_to_shape_map().keys())
    dts = [r.get_variable_to_dtype_map()[k] for k in keys]
    vals = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=keys, shape_and_slices=[""] * len(keys), dtypes=dts)
    with open(os.path.join(ROOT, "ours.restorev2.values"), "w") as f:
        for k, v in zip(keys, vals):
            f.write(line(k, v.numpy(), v.dtype))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "write"
    if what == "write":
        write_partitioned()
        write_sharded()
    elif what == "sharded":
        write_sharded()
    elif what == "verify":
        verify_ours()
    else:
        sys.exit("usage: make_bundle_fixtures.py write|verify")
