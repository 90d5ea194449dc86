#!/usr/bin/env python3
"""Writes a zoo of Keras models that no test here was written against, for
checking grapnel end to end on architectures beyond the golden models.

Each model (random weights, fixed seeds, small inputs so that the CPU runs
stay short) is written three ways into OUT/<name>/:
  saved_model/   tf.saved_model.save of the Keras model (serving_default)
  frozen.pb      its serving function frozen (convert_variables_to_constants_v2)
  in0.npy        one input batch; out0.npy TensorFlow's output on it (the
                 frozen graph run by tf.compat.v1.Session, oneDNN off)
and OUT/zoo.txt lists: name, input tensor, output tensor, per line.

Usage, in a virtualenv with the packages of tools/requirements-tools.txt:
    python tools/model_zoo.py OUT [--only NAME,...]
then tools/zoo_check.sh OUT BUILD runs grapnel over the zoo.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: E402

keras = tf.keras
L = keras.layers
A = keras.applications


def unet(shape):
    x = keras.Input(shape)
    c1 = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    p1 = L.MaxPooling2D()(c1)
    c2 = L.Conv2D(16, 3, padding="same", activation="relu")(p1)
    p2 = L.MaxPooling2D()(c2)
    b = L.Conv2D(32, 3, padding="same", activation="relu")(p2)
    u2 = L.Conv2DTranspose(16, 2, strides=2, padding="same")(b)
    m2 = L.Concatenate()([u2, c2])
    c3 = L.Conv2D(16, 3, padding="same", activation="relu")(m2)
    u1 = L.UpSampling2D(interpolation="bilinear")(c3)
    m1 = L.Concatenate()([u1, c1])
    c4 = L.Conv2D(8, 3, padding="same", activation="relu")(m1)
    y = L.Conv2D(3, 1, activation="sigmoid")(c4)
    return keras.Model(x, y)


def text_cnn(shape):
    x = keras.Input(shape, dtype="int32")
    e = L.Embedding(500, 32)(x)
    c = L.Conv1D(32, 5, activation="relu")(e)
    c = L.SeparableConv1D(32, 3, activation="relu", padding="same")(c)
    g = L.GlobalMaxPooling1D()(c)
    d = L.Dropout(0.5)(g)
    y = L.Dense(4, activation="softmax")(d)
    return keras.Model(x, y)


def bigru(shape):
    x = keras.Input(shape)
    h = L.Bidirectional(L.GRU(16, return_sequences=True))(x)
    h = L.LSTM(16)(h)
    y = L.Dense(3)(h)
    return keras.Model(x, y)


def vit(shape):
    x = keras.Input(shape)
    p = L.Conv2D(32, 8, strides=8)(x)
    t = L.Reshape((-1, 32))(p)
    n = t.shape[1]
    pos = L.Embedding(n, 32)(tf.range(n))
    t = t + pos
    for _ in range(2):
        h = L.LayerNormalization(epsilon=1e-6)(t)
        h = L.MultiHeadAttention(num_heads=4, key_dim=8)(h, h)
        t = t + h
        h = L.LayerNormalization(epsilon=1e-6)(t)
        h = L.Dense(64, activation="gelu")(h)
        h = L.Dense(32)(h)
        t = t + h
    g = L.GlobalAveragePooling1D()(t)
    y = L.Dense(10)(g)
    return keras.Model(x, y)


def resize_mix(shape):
    x = keras.Input(shape)
    a = L.Resizing(24, 24, interpolation="bilinear")(x)
    b = L.Resizing(24, 24, interpolation="nearest")(x)
    c = L.Concatenate()([a, b])
    c = L.Conv2D(8, 3, strides=2, padding="valid", activation="elu")(c)
    c = L.ZeroPadding2D(((1, 2), (0, 1)))(c)
    c = L.Cropping2D(((1, 0), (0, 1)))(c)
    c = L.BatchNormalization()(c)
    c = L.PReLU()(c)
    c = L.AveragePooling2D(3, strides=1, padding="same")(c)
    y = L.Flatten()(c)
    y = L.Dense(5, activation="tanh")(y)
    return keras.Model(x, y)


def mixed_f16(shape):
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        x = keras.Input(shape)
        h = L.Conv2D(8, 3, activation="relu")(x)
        h = L.BatchNormalization()(h)
        h = L.GlobalAveragePooling2D()(h)
        h = L.Dense(16, activation="swish")(h)
        y = L.Dense(4, dtype="float32")(h)
        return keras.Model(x, y)
    finally:
        keras.mixed_precision.set_global_policy("float32")


def masked_lstm(shape):
    x = keras.Input(shape, dtype="int32")
    e = L.Embedding(50, 8, mask_zero=True)(x)
    h = L.LSTM(8, return_sequences=True)(e)
    h = L.TimeDistributed(L.Dense(4, activation="relu"))(h)
    h = L.GlobalAveragePooling1D()(h)
    y = L.Dense(2)(h)
    return keras.Model(x, y)


class Gated(L.Layer):
    """A layer whose call branches on its input with tf.cond over its own variables."""

    def build(self, s):
        self.a = self.add_weight(shape=(s[-1],), initializer="random_normal")
        self.b = self.add_weight(shape=(s[-1],), initializer="random_normal")

    def call(self, t):
        return tf.cond(tf.reduce_mean(t) > 0, lambda: t * self.a, lambda: t + self.b)


def cond_layer(shape):
    x = keras.Input(shape)
    h = L.Dense(6)(x)
    h = Gated()(h)
    y = L.Dense(3)(h)
    return keras.Model(x, y)


def audio_stft(shape):
    x = keras.Input(shape)
    s = L.Lambda(lambda t: tf.math.log(tf.abs(tf.signal.stft(t, frame_length=64, frame_step=32)) + 1e-6))(x)
    h = L.Reshape((-1, 33, 1))(s)
    h = L.Conv2D(4, 3, activation="relu")(h)
    h = L.GlobalMaxPooling2D()(h)
    y = L.Dense(3)(h)
    return keras.Model(x, y)


def misc_ops(shape):
    x = keras.Input(shape)
    n = L.Normalization(mean=0.5, variance=2.0)(x)
    g = L.GroupNormalization(groups=2)(L.Conv2D(4, 1)(n))
    a = L.Attention()([L.Reshape((-1, 4))(g), L.Reshape((-1, 4))(g)])
    c = L.Conv3D(2, 2)(L.Reshape((4, 4, 4, 1))(L.Dense(64)(L.Flatten()(a))))
    f = L.Flatten()(c)
    y = L.Lambda(lambda t: tf.concat([tf.math.top_k(t, k=3).values, tf.cast(tf.argmax(t, axis=-1)[:, None], tf.float32),
                                      tf.reduce_logsumexp(t, -1, keepdims=True)], -1))(f)
    return keras.Model(x, y)


MODELS = {
    # name: (builder, input shape without batch, batch)
    "mobilenet_v3_small": (lambda s: A.MobileNetV3Small(input_shape=s, weights=None, classes=10), (96, 96, 3), 2),
    "efficientnet_b0": (lambda s: A.EfficientNetB0(input_shape=s, weights=None, classes=10), (64, 64, 3), 2),
    "densenet121": (lambda s: A.DenseNet121(input_shape=s, weights=None, classes=10), (64, 64, 3), 1),
    "inception_v3": (lambda s: A.InceptionV3(input_shape=s, weights=None, classes=10), (75, 75, 3), 1),
    "xception": (lambda s: A.Xception(input_shape=s, weights=None, classes=10), (71, 71, 3), 1),
    "resnet50_v2": (lambda s: A.ResNet50V2(input_shape=s, weights=None, classes=10), (64, 64, 3), 1),
    "nasnet_mobile": (lambda s: A.NASNetMobile(input_shape=s, weights=None, classes=10), (64, 64, 3), 1),
    "convnext_tiny": (lambda s: A.ConvNeXtTiny(input_shape=s, weights=None, classes=10), (32, 32, 3), 1),
    "vgg16": (lambda s: A.VGG16(input_shape=s, weights=None, classes=10), (32, 32, 3), 2),
    "unet": (unet, (32, 32, 3), 2),
    "text_cnn": (text_cnn, (40,), 3),
    "bigru": (bigru, (12, 8), 2),
    "vit": (vit, (32, 32, 3), 2),
    "resize_mix": (resize_mix, (20, 20, 3), 2),
    "mixed_f16": (mixed_f16, (16, 16, 3), 2),
    "masked_lstm": (masked_lstm, (10,), 3),
    "cond_layer": (cond_layer, (5,), 2),
    "audio_stft": (audio_stft, (512,), 2),
    "misc_ops": (misc_ops, (6, 6, 2), 2),
}


# ---- models that exercise each fusion the remapper knows (tools/tf_oracle.py checks that
# TensorFlow runs what grapnel writes for them) ----------------------------------------------
# non-zero biases and batch-norm statistics (zeros would be simplified away before any fusion)
_RND = keras.initializers.RandomNormal(stddev=0.5, seed=3)
_POS = keras.initializers.RandomUniform(0.5, 1.5, seed=4)


def _C(*a, **k):
    return L.Conv2D(*a, bias_initializer=_RND, **k)


def _D(*a, **k):
    return L.Dense(*a, bias_initializer=_RND, **k)


def _DW(*a, **k):
    return L.DepthwiseConv2D(*a, bias_initializer=_RND, **k)


def _BN():
    return L.BatchNormalization(beta_initializer=_RND, gamma_initializer=_POS, moving_mean_initializer=_RND,
                                moving_variance_initializer=_POS)


def _hard_swish(t):
    return t * tf.nn.relu6(t + 3.0) / 6.0


def fuse_conv_acts(shape):
    """Conv2D + BiasAdd + each activation, Conv2D + BiasAdd + Add (residual) + Relu."""
    x = keras.Input(shape)
    outs = []
    for act in ("relu", "relu6", "elu", "tanh", "sigmoid", "swish"):
        outs.append(_C(4, 3, padding="same", activation=act)(x))
    outs.append(L.LeakyReLU(negative_slope=0.1)(_C(4, 3, padding="same")(x)))
    outs.append(L.Lambda(_hard_swish)(_C(4, 3, padding="same")(x)))
    h = _C(4, 1)(x)
    r = L.ReLU()(L.Add()([_C(4, 3, padding="same")(h), h]))
    outs.append(r)
    c = L.Concatenate()(outs)
    return keras.Model(x, L.GlobalAveragePooling2D()(c))


def fuse_dense_acts(shape):
    """MatMul + BiasAdd + each activation, GELU exact and tanh, a residual Add."""
    x = keras.Input(shape)
    outs = [_D(6, activation=a)(x) for a in ("relu", "relu6", "elu", "tanh", "sigmoid", "silu")]
    outs.append(L.LeakyReLU(negative_slope=0.2)(_D(6)(x)))
    outs.append(L.Lambda(lambda t: tf.nn.gelu(t, approximate=False))(_D(6)(x)))
    outs.append(L.Lambda(lambda t: tf.nn.gelu(t, approximate=True))(_D(6)(x)))
    h = _D(6)(x)
    outs.append(L.ReLU()(L.Add()([_D(6)(h), h])))
    return keras.Model(x, L.Concatenate()(outs))


def fuse_se_block(shape):
    """EfficientNet's squeeze-and-excitation: a 1x1 Conv2D with a Sigmoid gate, Swish bodies."""
    x = keras.Input(shape)
    h = _C(16, 3, padding="same", use_bias=False)(x)
    h = _BN()(h)
    h = L.Activation("swish")(h)
    h = _DW(3, padding="same", use_bias=False)(h)
    h = _BN()(h)
    h = L.Activation("swish")(h)
    s = L.GlobalAveragePooling2D(keepdims=True)(h)
    s = _C(4, 1, activation="swish")(s)
    s = _C(16, 1, activation="sigmoid")(s)
    h = L.Multiply()([h, s])
    h = _C(8, 1, use_bias=False)(h)
    h = _BN()(h)
    return keras.Model(x, L.GlobalAveragePooling2D()(h))


def fuse_depthwise_bn(shape):
    """Batch norm after depthwise convolutions (+ Relu6 / Relu / none), and after a Conv2D."""
    x = keras.Input(shape)
    a = L.ReLU(max_value=6.0)(_BN()(_DW(3, padding="same", use_bias=False)(x)))
    b = L.ReLU()(_BN()(_DW(3, padding="same")(x)))
    c = _BN()(_DW(3, padding="same", depth_multiplier=2)(x))
    d = _DW(3, padding="same", activation="relu")(x)
    e = L.ReLU()(_BN()(_C(8, 3, padding="same", use_bias=False)(x)))
    return keras.Model(x, L.Concatenate()([a, b, c, d, e]))


class FusedBNRelu(L.Layer):
    """tf.compat.v1.nn.fused_batch_norm in inference (FusedBatchNormV3 in the graph) (+ side) + Relu."""

    def __init__(self, side=False, **kw):
        super().__init__(**kw)
        self.side = side

    def build(self, s):
        c = s[-1]
        self.scale = self.add_weight(shape=(c,), initializer="ones")
        self.offset = self.add_weight(shape=(c,), initializer="random_normal")
        self.mean = self.add_weight(shape=(c,), initializer="random_normal")
        self.var = self.add_weight(shape=(c,), initializer="ones")

    def call(self, t):
        y = tf.compat.v1.nn.fused_batch_norm(t, self.scale, self.offset, self.mean, self.var, epsilon=1e-3,
                                             is_training=False)[0]
        if self.side:
            y = y + t
        return tf.nn.relu(y)


def fuse_batchnorm_relu(shape):
    """FusedBatchNormV3 + Relu on 1 and 8 channels, with and without a side input (_FusedBatchNormEx)."""
    x = keras.Input(shape)
    one = FusedBNRelu()(_C(1, 3, padding="same")(x))
    eight = FusedBNRelu()(_C(8, 3, padding="same")(x))
    side = FusedBNRelu(side=True)(_C(8, 3, padding="same")(x))
    return keras.Model(x, L.Concatenate()([one, eight, side]))


FUSION_MODELS = {
    "fuse_conv_acts": (fuse_conv_acts, (12, 12, 3), 2),
    "fuse_dense_acts": (fuse_dense_acts, (10,), 3),
    "fuse_se_block": (fuse_se_block, (12, 12, 3), 2),
    "fuse_depthwise_bn": (fuse_depthwise_bn, (10, 10, 4), 2),
    "fuse_batchnorm_relu": (fuse_batchnorm_relu, (10, 10, 3), 2),
}
MODELS.update(FUSION_MODELS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    os.makedirs(args.out, exist_ok=True)
    lines = []
    for name, (build, shape, batch) in MODELS.items():
        if only and name not in only:
            continue
        tf.keras.utils.set_random_seed(1234)
        model = build(shape)
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(7)
        dtype = model.inputs[0].dtype
        if dtype == tf.int32:
            x = rng.integers(0, 500 if name == "text_cnn" else 50, size=(batch,) + shape).astype(np.int32)
            x[:, -2:] = 0   # padding (masked where the model masks)
        else:
            x = rng.standard_normal((batch,) + shape).astype(np.float32)
        spec = tf.TensorSpec((None,) + shape, dtype, name="x")
        fn = tf.function(lambda t: model(t, training=False), input_signature=[spec])
        cf = fn.get_concrete_function()
        tf.saved_model.save(model, os.path.join(d, "saved_model"), signatures={"serving_default": cf})
        frozen = convert_variables_to_constants_v2(cf)
        gd = frozen.graph.as_graph_def()
        with open(os.path.join(d, "frozen.pb"), "wb") as f:
            f.write(gd.SerializeToString())
        in_name = frozen.inputs[0].name
        out_name = frozen.outputs[0].name
        g = tf.Graph()
        with g.as_default():
            tf.compat.v1.import_graph_def(gd, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            y = sess.run(out_name, {in_name: x})
        ref = model(x, training=False).numpy()
        err = float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-30))
        np.save(os.path.join(d, "in0.npy"), x)
        np.save(os.path.join(d, "out0.npy"), y)
        lines.append("%s %s %s" % (name, in_name, out_name))
        print("%-20s %6d nodes  in %s out %s  frozen vs keras rel L2 %.2e" % (name, len(gd.node), in_name, out_name, err),
              flush=True)
    with open(os.path.join(args.out, "zoo.txt"), "a" if only else "w") as f:
        f.write("".join(l + "\n" for l in lines))


if __name__ == "__main__":
    sys.exit(main())
