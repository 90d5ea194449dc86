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
The decoder models (decoder_step, generate_loop) have several inputs and
outputs: in0.npy, in1.npy, .. and out0.npy, .. in the order zoo.txt lists
their tensors, comma-separated; no saved_model/ (they are not Keras models
with one signature input). tests/data/decoder is their copy for the tests:
    python tools/model_zoo.py tests/data/decoder --only decoder_step,generate_loop

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



# ---- more architectures: keras.applications trunks and custom models (random weights; the
# batch-norm statistics and the normalization scales and offsets set to seeded non-trivial values,
# so that no normalization is an identity that the optimizer would simplify away) ------------------
def _randomize_norms(model, seed=11):
    """Seeded non-trivial gamma/beta (and moving mean/variance) for every normalization layer."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, (L.BatchNormalization, L.LayerNormalization, L.GroupNormalization)):
            ws = []
            for w in layer.weights:
                n = w.path.rsplit("/", 1)[-1]
                pos = n in ("gamma", "moving_variance")
                v = rng.uniform(0.5, 1.5, w.shape) if pos else 0.5 * rng.standard_normal(w.shape)
                ws.append(v.astype(np.float32))
            layer.set_weights(ws)
    return model


def _trunk(app, layer, classes=10):
    """A keras.applications model cut after LAYER, with a pooled Dense head (keeps it small)."""
    h = L.GlobalAveragePooling2D()(app.get_layer(layer).output)
    return _randomize_norms(keras.Model(app.input, _D(classes)(h)))


def mobilenet_v2_035(shape):
    return _randomize_norms(A.MobileNetV2(input_shape=shape, alpha=0.35, weights=None, classes=10))


def mobilenet_v3_large(shape):
    return _randomize_norms(A.MobileNetV3Large(input_shape=shape, alpha=0.75, minimalistic=False, weights=None,
                                               classes=10))


def efficientnet_v2_b0(shape):
    """Fused-MBConv and MBConv (SE) blocks up to block5e (the full model is 24 MB)."""
    return _trunk(A.EfficientNetV2B0(input_shape=shape, weights=None, classes=10), "block5e_add")


def resnet50_v1(shape):
    """ResNet50 (v1: post-activation, projection shortcuts, stride in the 1x1) up to conv3_block4."""
    return _trunk(A.ResNet50(input_shape=shape, weights=None, classes=10), "conv3_block4_out")


def transformer_enc(shape):
    """Token ids; two post-norm encoder blocks: MultiHeadAttention with a padding attention mask
    (ids == 0) in one and a causal mask in the other, LayerNormalization, GELU feed-forward."""
    x = keras.Input(shape, dtype="int32")
    t = L.Embedding(50, 32)(x)
    mask = L.Lambda(lambda i: tf.logical_and(tf.not_equal(i, 0)[:, :, None], tf.not_equal(i, 0)[:, None, :]),
                    output_shape=shape + shape)(x)
    for causal in (False, True):
        h = L.MultiHeadAttention(num_heads=4, key_dim=8, dropout=0.1)(t, t, attention_mask=None if causal else mask,
                                                                      use_causal_mask=causal)
        t = L.LayerNormalization(epsilon=1e-5)(t + h)
        h = _D(64, activation="gelu")(t)
        h = _D(32)(h)
        t = L.LayerNormalization(epsilon=1e-5)(t + h)
    y = L.GlobalAveragePooling1D()(t)
    return _randomize_norms(keras.Model(x, _D(5)(y)))


def seq2seq_rnn(shape):
    """Token ids split into a source (first half) and a target (second half): an LSTM encoder's
    states start a GRU decoder (LSTM's h) and a second LSTM decoder; TimeDistributed Dense head."""
    x = keras.Input(shape, dtype="int32")
    n = shape[0] // 2
    src = L.Lambda(lambda i: i[:, :n])(x)
    tgt = L.Lambda(lambda i: i[:, n:])(x)
    emb = L.Embedding(50, 16)
    _, h, c = L.LSTM(16, return_state=True)(emb(src))
    d1 = L.LSTM(16, return_sequences=True)(emb(tgt), initial_state=[h, c])
    d2 = L.GRU(16, return_sequences=True, reset_after=True)(d1, initial_state=h)
    y = L.TimeDistributed(_D(50, activation="softmax"))(L.Concatenate()([d1, d2]))
    return keras.Model(x, y)


def video_conv3d(shape):
    """Clips [T, H, W, C]: Conv3D / BatchNorm / ReLU, a (1,2,2) and a (2,2,2) MaxPool3D, a strided
    Conv3D, a residual AveragePooling3D branch, GlobalAveragePooling3D."""
    x = keras.Input(shape)
    h = L.ReLU()(_BN()(L.Conv3D(8, 3, padding="same", use_bias=False)(x)))
    h = L.MaxPooling3D((1, 2, 2))(h)
    h = L.Conv3D(16, (3, 3, 3), strides=(1, 2, 2), padding="same", activation="relu", bias_initializer=_RND)(h)
    r = L.AveragePooling3D(3, strides=1, padding="same")(h)
    h = L.Add()([h, _BN()(L.Conv3D(16, 1, bias_initializer=_RND)(r))])
    h = L.MaxPooling3D(2)(h)
    return _randomize_norms(keras.Model(x, _D(4)(L.GlobalAveragePooling3D()(h))))


def tcn_audio(shape):
    """A WaveNet-style stack: causal Conv1D with dilations 1, 2, 4, 8, gated tanh * sigmoid,
    residual and skip connections, then a strided Conv1D and pooling."""
    x = keras.Input(shape)
    h = L.Conv1D(16, 1, bias_initializer=_RND)(x)
    skips = []
    for d in (1, 2, 4, 8):
        f = L.Conv1D(16, 3, padding="causal", dilation_rate=d, activation="tanh", bias_initializer=_RND)(h)
        g = L.Conv1D(16, 3, padding="causal", dilation_rate=d, activation="sigmoid", bias_initializer=_RND)(h)
        z = L.Multiply()([f, g])
        skips.append(L.Conv1D(16, 1)(z))
        h = L.Add()([h, L.Conv1D(16, 1)(z)])
    s = L.ReLU()(L.Add()(skips))
    s = L.Conv1D(8, 4, strides=4, activation="relu")(s)
    s = L.MaxPooling1D(2)(s)
    y = L.GlobalAveragePooling1D()(s)
    return keras.Model(x, _D(3)(y))


def norm_convs(shape):
    """GroupNormalization (4 groups, and 1 group: layer-norm over H, W, C), LayerNormalization over
    channels and over [H, W, C], UnitNormalization, on convolution features."""
    x = keras.Input(shape)
    a = L.GroupNormalization(groups=4, epsilon=1e-5)(_C(16, 3, padding="same")(x))
    a = L.Activation("swish")(a)
    b = L.GroupNormalization(groups=1)(_C(8, 3, padding="same")(a))
    c = L.LayerNormalization(axis=-1)(_C(8, 3, strides=2, padding="same")(a))
    d = L.LayerNormalization(axis=[1, 2, 3])(_C(8, 1)(a))
    u = L.UnitNormalization(axis=-1)(_C(8, 1)(a))
    h = L.Concatenate()([b, d, u])
    h = L.Concatenate()([L.MaxPooling2D()(h), c])
    return _randomize_norms(keras.Model(x, _D(6)(L.GlobalAveragePooling2D()(h))))


def tf_ops_lambda(shape):
    """Raw TensorFlow ops via Lambda: einsum, gather / gather_nd, nearest and bicubic resize,
    cumsum (exclusive, reverse), top_k, argmax, tf.where (select and indices), segment ops."""
    x = keras.Input(shape)
    h = _C(8, 3, padding="same", activation="relu")(x)

    def ops(t):
        b = tf.shape(t)[0]
        hw = shape[0] * shape[1]
        f = tf.reshape(t, [b, hw, 8])
        gram = tf.einsum("bnc,bnd->bcd", f, f) / hw                         # [B, 8, 8]
        up = tf.image.resize(t, [2 * shape[0], 2 * shape[1]], method="nearest")
        down = tf.image.resize(up, [shape[0] // 2, shape[1] // 2], method="bicubic")
        cs = tf.math.cumsum(tf.reduce_mean(down, [1, 2]), axis=-1, exclusive=True, reverse=True)  # [B, 8]
        vals, idx = tf.math.top_k(tf.reduce_max(f, -1), k=4)                # [B, 4]
        picked = tf.gather(f, idx, batch_dims=1)                            # [B, 4, 8]
        am = tf.cast(tf.argmax(tf.reduce_sum(f, 1), axis=-1), tf.float32)   # [B]
        sel = tf.where(gram > tf.reduce_mean(gram), gram, -gram)
        cols = tf.gather(sel, [3, 0, 5], axis=2)                            # [B, 8, 3]
        nz = tf.cast(tf.shape(tf.where(f > 0.5))[0], tf.float32)            # count of indices
        first = tf.gather_nd(picked, tf.stack([tf.range(b), tf.zeros([b], tf.int32)], 1))  # [B, 8]
        seg = tf.math.unsorted_segment_max(tf.transpose(f, [1, 0, 2]), tf.range(hw) % 3, 3)  # [3, B, 8]
        return tf.concat([tf.reshape(cols, [b, 24]), cs, vals, am[:, None], tf.reshape(picked, [b, 32]),
                          first, tf.fill([b, 1], nz / 100.0), tf.reshape(tf.transpose(seg, [1, 0, 2]), [b, 24])], -1)

    return keras.Model(x, L.Lambda(ops)(h))



def deeplab_aspp(shape):
    """DeepLab pieces: atrous convolution written as tf.nn.atrous_conv2d (SpaceToBatchND / Conv2D /
    BatchToSpaceND) at rates 3 (SAME) and 2 (VALID), a dilated DepthwiseConv2D, MirrorPad (REFLECT, SYMMETRIC),
    align_corners bilinear resize (v1), Conv2DTranspose with output_padding, BatchNorm + ReLU."""
    x = keras.Input(shape)
    h = L.ReLU()(_BN()(_C(8, 3, strides=2, padding="same", use_bias=False)(x)))   # odd input: 'same' pads 0/1
    k2 = np.random.default_rng(5).standard_normal((3, 3, 8, 8)).astype(np.float32) * 0.2
    k3 = np.random.default_rng(6).standard_normal((3, 3, 8, 8)).astype(np.float32) * 0.2
    a2 = L.Lambda(lambda t: tf.nn.atrous_conv2d(t, k2, rate=3, padding="SAME"))(h)
    a3 = L.Lambda(lambda t: tf.nn.atrous_conv2d(t, k3, rate=2, padding="VALID"))(h)
    a3 = L.Lambda(lambda t: tf.pad(t, [[0, 0], [2, 2], [2, 2], [0, 0]], mode="REFLECT"))(a3)
    d = _DW(3, padding="same", dilation_rate=2)(h)
    d = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 2], [2, 1], [0, 0]], mode="SYMMETRIC")[:, 1:-2, 2:-1, :])(d)
    pooled = L.GlobalAveragePooling2D(keepdims=True)(h)
    pooled = L.Lambda(lambda t: tf.compat.v1.image.resize_bilinear(t, [(shape[0] + 1) // 2] * 2, align_corners=True))(pooled)
    c = L.Concatenate()([h, a2, a3, d, pooled])
    c = L.ReLU()(_BN()(_C(8, 1, use_bias=False)(c)))
    up = L.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=0)(c)
    up = L.Lambda(lambda t: tf.compat.v1.image.resize_bilinear(t, [shape[0], shape[1]], align_corners=True))(up)
    return _randomize_norms(keras.Model(x, _C(3, 1)(up)))


def arith_mix(shape):
    """Patterns the arithmetic / constant-folding rewrites look for: Pow by 2, 0.5, 3, -1; chains of
    constant Mul / Add; Log(Softmax); Transpose of Transpose; Reshape chains; float -> int -> float
    casts (truncation); Sqrt(Square); Rsqrt; Reciprocal; x - x; clip; Maximum/Minimum; reversed
    and strided slices; Tile; BroadcastTo; squared difference; floormod of negatives."""
    x = keras.Input(shape)

    def f(t):
        b = tf.shape(t)[0]
        p = tf.pow(t, 2.0) + tf.pow(tf.abs(t) + 0.1, 0.5) + tf.pow(t, 3.0) * 0.1 + tf.pow(tf.abs(t) + 1.0, -1.0)
        c = ((t * 2.0) * 3.0 + 1.0) + 2.0 - (t - t)
        ls = tf.math.log(tf.nn.softmax(t, axis=-1))
        tt = tf.transpose(tf.transpose(tf.reshape(t, [b, 3, -1]), [0, 2, 1]), [0, 2, 1])
        tt = tf.reshape(tf.reshape(tt, [b, 2, -1]), [b, -1])
        cast = tf.cast(tf.cast(t * 3.0, tf.int32), tf.float32) + tf.cast(tf.cast(t, tf.float16), tf.float32)
        sq = tf.sqrt(tf.square(t)) + tf.math.rsqrt(tf.abs(t) + 1.0) + tf.math.reciprocal(tf.abs(t) + 1.0)
        cl = tf.clip_by_value(t, -0.5, 0.7) + tf.maximum(tf.minimum(t, 1.0), -1.0)
        rv = t[:, ::-1] + tf.reverse(t, [1])
        st = tf.tile(t[:, ::2][:, :shape[0] // 2], [1, 2]) if shape[0] % 2 == 0 else t
        bc = tf.broadcast_to(tf.reduce_mean(t, axis=1, keepdims=True), tf.shape(t))
        sd = tf.math.squared_difference(t, bc)
        fm = tf.math.floormod(t * 4.0, -3.0) + tf.cast(tf.math.floordiv(tf.cast(t * 5.0, tf.int32), -2), tf.float32)
        e = t[..., None][:, 1:-1, 0]
        e = tf.pad(e, [[0, 0], [1, 1]])
        outs = [p, c, ls, tt, cast, sq, cl, rv, st, bc, sd, fm, e,
                tf.math.log1p(tf.abs(t)), tf.math.expm1(t * 0.1), tf.math.erf(t), tf.math.softplus(t)]
        return tf.concat(outs, axis=-1)

    return keras.Model(x, L.Lambda(f)(x))


def grouped_conv(shape):
    """Grouped Conv2D (groups 2 and 4), SeparableConv2D with depth_multiplier 2, Conv1D with groups,
    strided 'same' convolutions on odd sizes, Conv1DTranspose, a 1x1 Conv2D on a 1x1 map."""
    x = keras.Input(shape)
    h = _C(8, 3, padding="same", groups=1, activation="relu")(x)
    g2 = _C(8, 3, padding="same", groups=2)(h)
    g4 = _C(8, 3, strides=2, padding="same", groups=4, activation="relu")(g2)
    sp = L.SeparableConv2D(8, 3, depth_multiplier=2, padding="same", bias_initializer=_RND)(g4)
    r = L.Reshape((-1, 8))(sp)
    c1 = L.Conv1D(8, 3, groups=2, padding="same", bias_initializer=_RND)(r)
    t1 = L.Conv1DTranspose(4, 3, strides=2, padding="same", bias_initializer=_RND)(c1)
    g = L.GlobalAveragePooling2D(keepdims=True)(sp)
    g = _C(8, 1, activation="sigmoid")(g)
    return keras.Model(x, L.Concatenate()([L.Flatten()(t1), L.Flatten()(g)]))


def int_ops(shape):
    """Integer paths from token ids: one_hot, integer cumsum / floordiv / floormod of negatives, bitwise
    ops, tensor_scatter_nd_update, sort / argsort, unsorted_segment_sum, int64 casts, equal/reduce_any."""
    x = keras.Input(shape, dtype="int32")

    def f(i):
        b = tf.shape(i)[0]
        oh = tf.reduce_sum(tf.one_hot(i, 50, on_value=2.0, off_value=-0.5), axis=1)        # [B, 50]
        cs = tf.math.cumsum(i, axis=1, exclusive=True)
        d = tf.math.floordiv(i - 25, 7) * 100 + tf.math.floormod(i - 25, -7)
        bw = tf.bitwise.bitwise_xor(tf.bitwise.left_shift(i, 2), tf.bitwise.bitwise_and(i, 13))
        upd = tf.tensor_scatter_nd_update(i, tf.stack([tf.range(b), tf.fill([b], 3)], 1), -tf.range(b) - 1)
        srt = tf.sort(i, axis=-1, direction="DESCENDING")
        arg = tf.argsort(i, axis=-1, stable=True)
        seg = tf.math.unsorted_segment_sum(tf.transpose(i), tf.range(shape[0]) % 4, 4)      # [4, B]
        wide = tf.cast(tf.cast(i, tf.int64) * 3000000000 // 7, tf.float32) / 1e9
        anyz = tf.cast(tf.reduce_any(tf.equal(i, 0), axis=1, keepdims=True), tf.float32)
        ints = tf.concat([cs, d, bw, upd, srt, arg, tf.transpose(seg)], axis=1)
        return tf.concat([oh, tf.cast(ints, tf.float32), wide, anyz], axis=1)

    return keras.Model(x, L.Lambda(f, output_shape=(50 + 6 * shape[0] + 4 + shape[0] + 1,))(x))


def attention_variants(shape):
    """Attention layers not in the zoo: MultiHeadAttention over two axes of an image
    (attention_axes=(1, 2)) with value_dim != key_dim and output_shape, AdditiveAttention,
    Attention with score_mode='concat', a Bidirectional SimpleRNN and a ConvLSTM2D."""
    x = keras.Input(shape)
    h = _C(8, 3, padding="same")(x)
    m = L.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=6, output_shape=8, attention_axes=(1, 2))(h, h)
    h = L.LayerNormalization()(h + m)
    seq = L.Reshape((-1, 8))(h)
    a = L.AdditiveAttention()([seq, seq])
    c = L.Attention(score_mode="concat")([seq, seq])
    r = L.Bidirectional(L.SimpleRNN(6, return_sequences=False))(L.Concatenate()([a, c]))
    clip = L.Reshape((shape[0], shape[1] // 2, 2, 8))(h)   # T = rows, a [W/2, 2] map of 8 channels
    cl = L.ConvLSTM2D(4, 2, padding="same")(clip)
    return _randomize_norms(keras.Model(x, L.Concatenate()([r, L.Flatten()(cl)])))


def double_precision(shape):
    """A float64 model (Keras dtype float64): Conv2D, BatchNorm, Dense, softmax, all in double."""
    x = keras.Input(shape, dtype="float64")
    h = L.Conv2D(6, 3, padding="same", activation="relu", dtype="float64", bias_initializer=_RND)(x)
    h = L.BatchNormalization(dtype="float64", beta_initializer=_RND, gamma_initializer=_POS,
                             moving_mean_initializer=_RND, moving_variance_initializer=_POS)(h)
    h = L.GlobalAveragePooling2D(dtype="float64")(h)
    return keras.Model(x, L.Dense(4, activation="softmax", dtype="float64")(h))


def vision_ops(shape):
    """uint8 image input; image ops of super-resolution and detection models: space_to_depth /
    depth_to_space (pixel shuffle), extract_patches, local response normalization, crop_and_resize,
    max_pool_with_argmax, area and bicubic resize, non_max_suppression (padded), rfft2d magnitude."""
    x = keras.Input(shape, dtype="uint8")

    def f(u):
        t = tf.cast(u, tf.float32) / 127.5 - 1.0
        b = tf.shape(t)[0]
        s2d = tf.nn.space_to_depth(t, 2)                                       # [B, 8, 8, 12]
        d2s = tf.nn.depth_to_space(s2d * 0.5, 2)                               # [B, 16, 16, 3]
        pat = tf.image.extract_patches(t, [1, 3, 3, 1], [1, 4, 4, 1], [1, 1, 1, 1], "VALID")  # [B, 4, 4, 27]
        lrn = tf.nn.local_response_normalization(s2d, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)
        boxes = tf.constant([[0.0, 0.0, 0.5, 0.5], [0.25, 0.1, 0.9, 0.8], [0.1, 0.3, 0.6, 0.95]])
        crops = tf.image.crop_and_resize(t, tf.tile(boxes, [2, 1]), tf.repeat(tf.range(2), 3) % b, [5, 5])
        mp, am = tf.nn.max_pool_with_argmax(t, 2, 2, "SAME", include_batch_in_index=True)
        area = tf.image.resize(t, [5, 7], method="area")
        cubic = tf.image.resize(t, [11, 9], method="bicubic")
        scores = tf.reduce_mean(crops[:3], [1, 2, 3])
        sel, n = tf.image.non_max_suppression_padded(boxes, scores, 2, iou_threshold=0.3, pad_to_max_output_size=True)
        spec = tf.abs(tf.signal.rfft2d(tf.transpose(t, [0, 3, 1, 2])))          # [B, 3, 16, 9]
        flat = lambda v: tf.reshape(v, [b, -1])                                 # noqa: E731
        return tf.concat([flat(d2s), flat(pat), flat(lrn), tf.reshape(crops, [2, -1])[:1] + tf.zeros([b, 1]),
                          flat(mp), tf.cast(flat(am) % 97, tf.float32), flat(area), flat(cubic),
                          tf.cast(tf.tile(sel[None], [b, 1]), tf.float32), tf.fill([b, 1], tf.cast(n, tf.float32)),
                          flat(spec) * 0.01], axis=1)

    n_out = 768 + 432 + 768 + 225 + 192 + 192 + 105 + 297 + 2 + 1 + 432
    return keras.Model(x, L.Lambda(f, output_shape=(n_out,))(x))

NEW_MODELS = {
    "mobilenet_v2_035": (mobilenet_v2_035, (96, 96, 3), 2),
    "mobilenet_v3_large": (mobilenet_v3_large, (96, 96, 3), 1),
    "efficientnet_v2_b0": (efficientnet_v2_b0, (64, 64, 3), 1),
    "resnet50_v1": (resnet50_v1, (64, 64, 3), 1),
    "transformer_enc": (transformer_enc, (12,), 2),
    "seq2seq_rnn": (seq2seq_rnn, (16,), 2),
    "video_conv3d": (video_conv3d, (4, 16, 16, 3), 2),
    "tcn_audio": (tcn_audio, (256, 1), 2),
    "norm_convs": (norm_convs, (16, 16, 3), 2),
    "tf_ops_lambda": (tf_ops_lambda, (8, 8, 3), 2),
    "deeplab_aspp": (deeplab_aspp, (17, 17, 3), 2),
    "arith_mix": (arith_mix, (12,), 3),
    "grouped_conv": (grouped_conv, (9, 9, 4), 2),
    "int_ops": (int_ops, (12,), 3),
    "attention_variants": (attention_variants, (4, 6, 3), 2),
    "double_precision": (double_precision, (8, 8, 3), 2),
    "vision_ops": (vision_ops, (16, 16, 3), 2),
}
MODELS.update(NEW_MODELS)


# ---- a third set: more keras.applications trunks, recurrent convolutions, the attention and
# transposed-convolution layers, preprocessing layers, sorting and scattering ops ---------------------
def inception_resnet_v2(shape):
    """Inception-ResNet-V2 up to mixed_6a: stem, ten block35 (scaled residual adds), reduction A."""
    return _trunk(A.InceptionResNetV2(input_shape=shape, weights=None, classes=10), "mixed_6a")


def mobilenet_v1(shape):
    return _randomize_norms(A.MobileNet(input_shape=shape, alpha=0.5, weights=None, classes=10))


def mobilenet_v3_small_min(shape):
    """MobileNetV3Small minimalistic: no squeeze-excite, no hard-swish, 3x3 kernels only."""
    return _randomize_norms(A.MobileNetV3Small(input_shape=shape, minimalistic=True, alpha=0.75, weights=None,
                                               classes=10))


def resnext_se(shape):
    """Two ResNeXt bottlenecks (grouped 3x3, cardinality 8) with squeeze-excite and projection shortcuts."""
    x = keras.Input(shape)
    h = L.Activation("relu")(_BN()(_C(32, 3, strides=2, padding="same", use_bias=False)(x)))
    for f in (32, 64):
        sc = h if h.shape[-1] == f else _BN()(_C(f, 1, use_bias=False)(h))
        y = L.Activation("relu")(_BN()(_C(f, 1, use_bias=False)(h)))
        y = L.Activation("relu")(_BN()(_C(f, 3, padding="same", groups=8, use_bias=False)(y)))
        se = L.GlobalAveragePooling2D(keepdims=True)(y)
        se = _C(f, 1, activation="sigmoid")(_C(8, 1, activation="relu")(se))
        y = _BN()(_C(f, 1, use_bias=False)(L.Multiply()([y, se])))
        h = L.MaxPooling2D(padding="same")(L.Activation("relu")(L.Add()([y, sc])))
    return _randomize_norms(keras.Model(x, _D(10)(L.GlobalAveragePooling2D()(h))))


def conv_lstm(shape):
    """ConvLSTM2D (a While of convolutions), batch norm over time, a second ConvLSTM2D, 1x1 head."""
    x = keras.Input(shape)
    h = L.ConvLSTM2D(6, 3, padding="same", return_sequences=True)(x)
    h = L.BatchNormalization()(h)
    h = L.ConvLSTM2D(4, 3, padding="same", return_sequences=False)(h)
    return _randomize_norms(keras.Model(x, L.Conv2D(3, 1, activation="sigmoid")(h)))


def seq_attention(shape):
    """Embedding into a bidirectional LSTM, a GRU (reset_after=False) and a SimpleRNN; additive and
    scaled dot-product attention layers; TimeDistributed Dense; global max pooling."""
    x = keras.Input(shape, dtype="int32")
    e = L.Embedding(60, 16)(x)
    h = L.Bidirectional(L.LSTM(12, return_sequences=True))(e)
    g = L.GRU(10, return_sequences=True, reset_after=False)(e)
    s = L.SimpleRNN(8, return_sequences=True)(e)
    a1 = L.AdditiveAttention()([h, h])
    a2 = L.Attention(use_scale=True)([h, h])
    t = L.TimeDistributed(L.Dense(7, activation="tanh"))(L.Concatenate()([a1, a2, g, s]))
    return keras.Model(x, L.Dense(3)(L.GlobalMaxPooling1D()(t)))


def deconv_mix(shape):
    """Asymmetric zero padding, dilated separable conv, Conv2DTranspose, asymmetric cropping,
    bilinear upsampling, grouped strided conv; causal dilated Conv1D, Conv1DTranspose,
    SeparableConv1D."""
    x = keras.Input(shape)
    h = L.ZeroPadding2D(((1, 2), (2, 1)))(x)
    h = L.SeparableConv2D(8, 3, dilation_rate=2, padding="same", activation="elu")(h)
    h = L.Conv2DTranspose(6, 3, strides=2, padding="same", activation="selu")(h)
    h = L.Cropping2D(((2, 1), (1, 3)))(h)
    h = L.UpSampling2D(2, interpolation="bilinear")(h)
    h = L.AveragePooling2D(3, strides=2, padding="same")(h)
    h = L.LeakyReLU(0.2)(_BN()(h))
    h = L.Conv2D(4, 3, strides=2, groups=2)(h)
    r = L.Reshape((-1, 4))(h)
    r = L.Conv1D(5, 3, padding="causal", dilation_rate=2)(r)
    r = L.Conv1DTranspose(3, 3, strides=2)(r)
    r = L.SeparableConv1D(4, 3, padding="same")(r)
    return _randomize_norms(keras.Model(x, L.Dense(2, activation="softmax")(L.GlobalAveragePooling1D()(r))))


def sort_scatter_ops(shape):
    """sort, top_k, argsort, exclusive reverse cumsum, cumprod, gather_nd, scatter_nd, band_part of
    an einsum, roll, reverse, logsumexp, log_softmax, l2_normalize, clip, where, unsorted_segment_sum."""
    x = keras.Input(shape)

    def f(t):
        s = tf.sort(t, axis=-1, direction="DESCENDING")
        k = tf.math.top_k(t, k=3).values
        a = tf.cast(tf.argsort(t, axis=-1), tf.float32)
        c = tf.math.cumsum(t, axis=1, exclusive=True, reverse=True) + tf.math.cumprod(tf.tanh(t), axis=-1)
        g = tf.gather_nd(tf.transpose(t, [1, 2, 0]), tf.constant([[0, 1], [1, 2], [2, 0]]))
        sc = tf.scatter_nd(tf.constant([[1], [3]]), tf.ones([2, 4]), [5, 4])
        b = tf.linalg.band_part(tf.einsum("bij,bkj->bik", t, t), 1, 0)
        r = tf.roll(tf.reverse(t, [2]), shift=2, axis=1)
        lse = tf.reduce_logsumexp(t, axis=-1, keepdims=True)
        ls = tf.nn.log_softmax(t) + tf.math.l2_normalize(t, axis=-1)
        cl = tf.clip_by_value(t, -0.5, 0.7) * tf.cast(t > 0, tf.float32)
        w = tf.where(t > 0.3, t, tf.square(t))
        seg = tf.math.unsorted_segment_sum(tf.transpose(t, [1, 0, 2]), tf.constant([0, 1, 0, 2, 1, 0]), 3)
        m = tf.reduce_mean(seg) + tf.reduce_sum(g) * 0.01 + tf.reduce_sum(sc)
        return tf.concat([s[..., :3], k, a[..., :3] * 0.1, c[..., :3], r[..., :3], lse, ls[..., :3], cl[..., :3],
                          w[..., :3], b[..., :3]], axis=-1) + m

    return keras.Model(x, L.Lambda(f)(x))


def preprocessing(shape):
    """Normalization, Rescaling, Resizing, CenterCrop layers; GroupNormalization, LayerNormalization
    over three axes, UnitNormalization; swish, gelu, softplus, softsign; dropouts (inference)."""
    x = keras.Input(shape)
    h = L.Normalization(mean=[0.1, -0.2, 0.3], variance=[1.5, 0.5, 2.0])(x)
    h = L.Rescaling(1 / 4.0, offset=0.25)(h)
    h = L.CenterCrop(16, 16)(L.Resizing(20, 24, interpolation="bilinear")(h))
    h = L.GroupNormalization(groups=4)(_C(8, 3, activation="swish")(h))
    h = _DW(3, depth_multiplier=2, padding="same", activation="gelu")(L.SpatialDropout2D(0.3)(h))
    h = L.MaxPooling2D()(L.LayerNormalization(axis=[1, 2, 3])(h))
    h = L.Dense(16, activation="softplus")(L.Dropout(0.5)(L.Flatten()(h)))
    return _randomize_norms(keras.Model(x, _D(4, activation="softsign")(L.UnitNormalization()(h))))


MORE_MODELS = {
    "inception_resnet_v2": (inception_resnet_v2, (75, 75, 3), 1),
    "mobilenet_v1": (mobilenet_v1, (64, 64, 3), 2),
    "mobilenet_v3_small_min": (mobilenet_v3_small_min, (64, 64, 3), 2),
    "resnext_se": (resnext_se, (32, 32, 3), 2),
    "conv_lstm": (conv_lstm, (4, 8, 8, 2), 2),
    "seq_attention": (seq_attention, (9,), 3),
    "deconv_mix": (deconv_mix, (12, 12, 3), 2),
    "sort_scatter_ops": (sort_scatter_ops, (6, 5), 3),
    "preprocessing": (preprocessing, (18, 18, 3), 2),
}
MODELS.update(MORE_MODELS)

# ---- decoder models: a step with a key/value cache and a greedy generate loop over it ------------
# Several inputs and outputs each; written by write_decoder() (zoo.txt lists their tensors comma-
# separated, in0.npy.., out0.npy.. in that order). Small: the frozen graphs are committed under
# tests/data/decoder (tests/decoder_test.c).
DEC = {"vocab": 50, "d_model": 32, "heads": 2, "max_len": 16, "batch": 2}


class DecoderStep(keras.Model):
    """One step of a pre-norm transformer decoder over a key/value cache, as a Keras 3 user writes
    it: token ids [B] and the position (int32 scalar) in, the caches [B, T, H, Dh]; the new token's
    keys and values written into the caches at `pos` with keras.ops.slice_update, attention over
    the positions <= pos; returns the logits [B, vocab] and the updated caches."""

    def __init__(self, vocab, d_model, heads, max_len, **kw):
        super().__init__(**kw)
        self.h, self.dh, self.t = heads, d_model // heads, max_len
        self.tok = L.Embedding(vocab, d_model)
        self.pos = L.Embedding(max_len, d_model)
        self.ln1 = L.LayerNormalization(epsilon=1e-5)
        self.ln2 = L.LayerNormalization(epsilon=1e-5)
        self.lnf = L.LayerNormalization(epsilon=1e-5)
        self.q, self.k, self.v = (_D(d_model) for _ in range(3))
        self.o = _D(d_model)
        self.ff1 = _D(4 * d_model, activation="gelu")
        self.ff2 = _D(d_model)
        self.head = _D(vocab)

    def call(self, ids, pos, k_cache, v_cache):
        ops = keras.ops
        x = self.tok(ids) + self.pos(pos)                       # [B, d]
        a = self.ln1(x)
        split = lambda t: ops.reshape(t, (-1, 1, self.h, self.dh))  # noqa: E731
        q = ops.reshape(self.q(a), (-1, self.h, self.dh))
        zero = ops.zeros((), "int32")
        start = [zero, ops.cast(pos, "int32"), zero, zero]
        k_cache = ops.slice_update(k_cache, start, split(self.k(a)))
        v_cache = ops.slice_update(v_cache, start, split(self.v(a)))
        s = ops.einsum("bhd,bthd->bht", q, k_cache) / float(np.sqrt(self.dh))
        mask = ops.arange(self.t) <= pos                         # [T]
        s = ops.where(mask[None, None, :], s, -1e9)
        p = ops.softmax(s, axis=-1)
        att = ops.reshape(ops.einsum("bht,bthd->bhd", p, v_cache), (-1, self.h * self.dh))
        x = x + self.o(att)
        x = x + self.ff2(self.ff1(self.ln2(x)))
        return self.head(self.lnf(x)), k_cache, v_cache


def _decoder_step_model():
    tf.keras.utils.set_random_seed(1234)
    m = DecoderStep(DEC["vocab"], DEC["d_model"], DEC["heads"], DEC["max_len"])
    b, t, h, dh = DEC["batch"], DEC["max_len"], DEC["heads"], DEC["d_model"] // DEC["heads"]
    m(np.zeros((b,), np.int32), np.int32(0), np.zeros((b, t, h, dh), np.float32), np.zeros((b, t, h, dh), np.float32))
    return m


def _cache_spec(name):
    return tf.TensorSpec((None, DEC["max_len"], DEC["heads"], DEC["d_model"] // DEC["heads"]), tf.float32, name=name)


def decoder_step():
    """The step, with a cache already holding 5 positions (from running it on 5 tokens)."""
    m = _decoder_step_model()
    fn = tf.function(lambda ids, pos, kc, vc: m(ids, pos, kc, vc),
                     input_signature=[tf.TensorSpec((None,), tf.int32, name="ids"),
                                      tf.TensorSpec((), tf.int32, name="pos"), _cache_spec("k_cache"),
                                      _cache_spec("v_cache")])
    rng = np.random.default_rng(7)
    b, shp = DEC["batch"], _cache_spec("c").shape[1:]
    kc = np.zeros((b,) + tuple(shp), np.float32)
    vc = np.zeros_like(kc)
    for i in range(5):
        _, kc, vc = fn(rng.integers(0, DEC["vocab"], size=(b,)).astype(np.int32), np.int32(i), kc, vc)
        kc, vc = kc.numpy(), vc.numpy()
    feeds = [rng.integers(0, DEC["vocab"], size=(b,)).astype(np.int32), np.int32(5), kc, vc]
    return fn.get_concrete_function(), feeds, True


def generate_loop():
    """Greedy generation: tf.while_loop over the step for max_len - 1 steps, the caches, the last
    token and the generated ids (written with slice_update) as loop variables. Returns the ids
    [B, T] (the start tokens first) and the last step's logits."""
    m = _decoder_step_model()
    t, vocab = DEC["max_len"], DEC["vocab"]

    @tf.function(input_signature=[tf.TensorSpec((None,), tf.int32, name="start")])
    def generate(start):
        ops = keras.ops
        b = tf.shape(start)[0]
        kc = tf.zeros(tf.stack([b, t, DEC["heads"], DEC["d_model"] // DEC["heads"]]), tf.float32)
        out = ops.slice_update(tf.zeros(tf.stack([b, t]), tf.int32), [0, 0], start[:, None])
        logits = tf.zeros(tf.stack([b, vocab]), tf.float32)

        def body(i, tok, kc, vc, out, logits):
            logits, kc, vc = m(tok, i, kc, vc)
            nxt = ops.cast(ops.argmax(logits, axis=-1), "int32")
            out = ops.slice_update(out, [0, i + 1], nxt[:, None])
            return i + 1, nxt, kc, vc, out, logits

        _, _, _, _, out, logits = tf.while_loop(lambda i, *_: i < t - 1, body,
                                                (tf.constant(0), start, kc, kc, out, logits))
        return out, logits

    rng = np.random.default_rng(7)
    return generate.get_concrete_function(), [rng.integers(0, vocab, size=(DEC["batch"],)).astype(np.int32)], False


DECODER_MODELS = {"decoder_step": decoder_step, "generate_loop": generate_loop}


def write_decoder(name, out):
    """Freezes decoder model NAME into OUT/NAME (frozen.pb, in<k>.npy, out<k>.npy; the While kept
    functional, lower_control_flow=False, for the loop) and returns its zoo.txt line."""
    cf, feeds, lower = DECODER_MODELS[name]()
    frozen = convert_variables_to_constants_v2(cf, lower_control_flow=lower)
    gd = frozen.graph.as_graph_def()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "frozen.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    in_names = [t.name for t in frozen.inputs]
    out_names = [t.name for t in frozen.outputs]
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=g) as sess:
        ys = sess.run(out_names, dict(zip(in_names, feeds)))
    refs = [np.asarray(r) for r in cf(*[tf.constant(x) for x in feeds])]
    errs = []
    for y, r in zip(ys, refs):
        if y.dtype.kind == "f":
            errs.append("%.1e" % (np.linalg.norm(y - r) / max(np.linalg.norm(r), 1e-30)))
        else:
            errs.append("exact" if np.array_equal(y, r) else "DIFFERENT")
    for k, x in enumerate(feeds):
        np.save(os.path.join(d, "in%d.npy" % k), np.asarray(x))
    for k, y in enumerate(ys):
        np.save(os.path.join(d, "out%d.npy" % k), y)
    print("%-20s %6d nodes  in %s out %s  frozen vs eager %s" % (name, len(gd.node), ",".join(in_names),
                                                                 ",".join(out_names), " ".join(errs)), flush=True)
    return "%s %s %s" % (name, ",".join(in_names), ",".join(out_names))


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
        elif dtype == tf.uint8:
            x = rng.integers(0, 256, size=(batch,) + shape).astype(np.uint8)
        else:
            x = rng.standard_normal((batch,) + shape).astype(tf.as_dtype(dtype).as_numpy_dtype)
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
    lines += [write_decoder(name, args.out) for name in DECODER_MODELS if only is None or name in only]
    # with --only: the other models' lines stay, the rewritten ones are replaced
    zt = os.path.join(args.out, "zoo.txt")
    done = {l.split()[0] for l in lines}
    keep = [l.rstrip("\n") for l in open(zt)] if only and os.path.exists(zt) else []
    lines = [l for l in keep if l.split() and l.split()[0] not in done] + lines
    with open(zt, "w") as f:
        f.write("".join(l + "\n" for l in lines))


if __name__ == "__main__":
    sys.exit(main())
