/* Dequantize's CPU kernel (src/ops/kernels/quant.c): every quantized T
 * (qint8, quint8, qint16, quint16, qint32) in the three modes, narrow_range
 * both ways, three ranges (one with min == max), per channel along axes 0, 1
 * and 2, bfloat16 output, and TensorFlow's messages for bad axes, range sizes
 * and modes. The expected floats were printed by TensorFlow 2.21
 * (tools/make_dequantize_values.py) as hex literals and are compared bit for
 * bit (both kernel paths). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/op_fns.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT

typedef struct dq_case {
    int32_t dtype;
    float lo, hi;
    const char *mode;
    bool narrow;
    float want[6];
} dq_case;

typedef struct dq_pc {
    int axis;
    const char *mode;
    bool narrow;
    float want[12];
} dq_pc;

typedef struct dq_bf {
    int32_t dtype;
    uint16_t want[6];
} dq_bf;

/* the inputs, as tools/make_dequantize_values.py's INPUTS */
static const int8_t IN_QINT8[6] = {-128, -1, 0, 1, 127, 77};
static const uint8_t IN_QUINT8[6] = {0, 1, 128, 255, 77, 200};
static const int16_t IN_QINT16[6] = {-32768, -1, 0, 32767, 1234, -4321};
static const uint16_t IN_QUINT16[6] = {0, 1, 32768, 65535, 1234, 54321};
static const int32_t IN_QINT32[6] = {INT32_MIN, -5, 7, INT32_MAX, 123456789, -987654};
static const int8_t IN_PC[12] = {-128, -64, -1, 0, 1, 63, 127, 100, -100, 5, -5, 42};   /* [2,3,2] */

static const void *input_of(int32_t dt)
{
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_QINT8: return IN_QINT8;
    case TENSORFLOW__DATA_TYPE__DT_QUINT8: return IN_QUINT8;
    case TENSORFLOW__DATA_TYPE__DT_QINT16: return IN_QINT16;
    case TENSORFLOW__DATA_TYPE__DT_QUINT16: return IN_QUINT16;
    default: return IN_QINT32;
    }
}

static const char *dt_attr(int32_t dt)
{
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_QINT8: return "DT_QINT8";
    case TENSORFLOW__DATA_TYPE__DT_QUINT8: return "DT_QUINT8";
    case TENSORFLOW__DATA_TYPE__DT_QINT16: return "DT_QINT16";
    case TENSORFLOW__DATA_TYPE__DT_QUINT16: return "DT_QUINT16";
    default: return "DT_QINT32";
    }
}

static const dq_case CASES[] = {
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -1.5f, 2.25f, "MIN_COMBINED", false,
     {-0x1.8000000000000p+0f, 0x1.7878780000000p-2f, 0x1.8787880000000p-2f,
      0x1.9696980000000p-2f, 0x1.2000000000000p+1f, 0x1.83c3c40000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -1.5f, 2.25f, "MIN_FIRST", false,
     {-0x1.8000000000000p+0f, 0x1.7878780000000p-2f, 0x1.8787880000000p-2f,
      0x1.9696980000000p-2f, 0x1.2000000000000p+1f, 0x1.83c3c40000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -1.5f, 2.25f, "SCALED", false,
     {-0x1.22448a0000000p+1f, -0x1.22448a0000000p-6f, 0x0.0p+0f,
      0x1.22448a0000000p-6f, 0x1.2000000000000p+1f, 0x1.5d3a760000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -1.5f, 2.25f, "SCALED", true,
     {-0x1.22448a0000000p+1f, -0x1.22448a0000000p-6f, 0x0.0p+0f,
      0x1.22448a0000000p-6f, 0x1.2000000000000p+1f, 0x1.5d3a760000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -0.7f, 0.3f, "MIN_COMBINED", false,
     {-0x1.6666660000000p-1f, -0x1.9d9d980000000p-3f, -0x1.9595900000000p-3f,
      -0x1.8d8d880000000p-3f, 0x1.3333340000000p-2f, 0x1.a9a9c00000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -0.7f, 0.3f, "MIN_FIRST", false,
     {-0x1.6565660000000p-1f, -0x1.9999980000000p-3f, -0x1.9191900000000p-3f,
      -0x1.8989880000000p-3f, 0x1.3535380000000p-2f, 0x1.b1b1b80000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -0.7f, 0.3f, "SCALED", false,
     {-0x1.6666660000000p-1f, -0x1.6666660000000p-8f, 0x0.0p+0f,
      0x1.6666660000000p-8f, 0x1.63999a0000000p-1f, 0x1.af33320000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, -0.7f, 0.3f, "SCALED", true,
     {-0x1.6938d80000000p-1f, -0x1.6938d80000000p-8f, 0x0.0p+0f,
      0x1.6938d80000000p-8f, 0x1.6666660000000p-1f, 0x1.b298640000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, 0.5f, 0.5f, "MIN_COMBINED", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, 0.5f, 0.5f, "MIN_FIRST", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, 0.5f, 0.5f, "SCALED", false,
     {-0x1.0204080000000p-1f, -0x1.0204080000000p-8f, 0x0.0p+0f,
      0x1.0204080000000p-8f, 0x1.0000000000000p-1f, 0x1.366cda0000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT8, 0.5f, 0.5f, "SCALED", true,
     {-0x1.0204080000000p-1f, -0x1.0204080000000p-8f, 0x0.0p+0f,
      0x1.0204080000000p-8f, 0x1.0000000000000p-1f, 0x1.366cda0000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -1.5f, 2.25f, "MIN_COMBINED", false,
     {-0x1.8000000000000p+0f, -0x1.7c3c3c0000000p+0f, 0x1.8787880000000p-2f,
      0x1.2000000000000p+1f, -0x1.7878780000000p-2f, 0x1.70f0f00000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -1.5f, 2.25f, "MIN_FIRST", false,
     {-0x1.8000000000000p+0f, -0x1.7c3c3c0000000p+0f, 0x1.8787880000000p-2f,
      0x1.2000000000000p+1f, -0x1.7878780000000p-2f, 0x1.70f0f00000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -1.5f, 2.25f, "SCALED", false,
     {0x0.0p+0f, 0x1.2121220000000p-7f, 0x1.2121220000000p+0f,
      0x1.2000000000000p+1f, 0x1.5bdbdc0000000p-1f, 0x1.c3c3c60000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -1.5f, 2.25f, "SCALED", true,
     {0x0.0p+0f, 0x1.2121220000000p-7f, 0x1.2121220000000p+0f,
      0x1.2000000000000p+1f, 0x1.5bdbdc0000000p-1f, 0x1.c3c3c60000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -0.7f, 0.3f, "MIN_COMBINED", false,
     {-0x1.6666660000000p-1f, -0x1.6464640000000p-1f, -0x1.9595900000000p-3f,
      0x1.3333340000000p-2f, -0x1.9797960000000p-2f, 0x1.5959700000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -0.7f, 0.3f, "MIN_FIRST", false,
     {-0x1.6565660000000p-1f, -0x1.6363640000000p-1f, -0x1.9191900000000p-3f,
      0x1.3535340000000p-2f, -0x1.9595960000000p-2f, 0x1.6161700000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -0.7f, 0.3f, "SCALED", false,
     {0x0.0p+0f, 0x1.34679c0000000p-10f, 0x1.34679c0000000p-3f,
      0x1.3333340000000p-2f, 0x1.730ca80000000p-4f, 0x1.e1e1e40000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, -0.7f, 0.3f, "SCALED", true,
     {0x0.0p+0f, 0x1.34679c0000000p-10f, 0x1.34679c0000000p-3f,
      0x1.3333340000000p-2f, 0x1.730ca80000000p-4f, 0x1.e1e1e40000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, 0.5f, 0.5f, "MIN_COMBINED", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, 0.5f, 0.5f, "MIN_FIRST", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, 0.5f, 0.5f, "SCALED", false,
     {0x0.0p+0f, 0x1.0101020000000p-9f, 0x1.0101020000000p-2f,
      0x1.0000000000000p-1f, 0x1.3535360000000p-3f, 0x1.9191940000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, 0.5f, 0.5f, "SCALED", true,
     {0x0.0p+0f, 0x1.0101020000000p-9f, 0x1.0101020000000p-2f,
      0x1.0000000000000p-1f, 0x1.3535360000000p-3f, 0x1.9191940000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -1.5f, 2.25f, "MIN_COMBINED", false,
     {-0x1.8000000000000p+0f, 0x1.7ff8800000000p-2f, 0x1.8007800000000p-2f,
      0x1.2000000000000p+1f, 0x1.c855c80000000p-2f, 0x1.05af000000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -1.5f, 2.25f, "MIN_FIRST", false,
     {-0x1.8000000000000p+0f, 0x1.7ff8800000000p-2f, 0x1.8007800000000p-2f,
      0x1.2000000000000p+1f, 0x1.c855c80000000p-2f, 0x1.05af060000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -1.5f, 2.25f, "SCALED", false,
     {-0x1.2002400000000p+1f, -0x1.2002400000000p-14f, 0x0.0p+0f,
      0x1.2000000000000p+1f, 0x1.5b12b60000000p-4f, -0x1.2fd4600000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -1.5f, 2.25f, "SCALED", true,
     {-0x1.2002400000000p+1f, -0x1.2002400000000p-14f, 0x0.0p+0f,
      0x1.2000000000000p+1f, 0x1.5b12b60000000p-4f, -0x1.2fd4600000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -0.7f, 0.3f, "MIN_COMBINED", false,
     {-0x1.6666660000000p-1f, -0x1.999d980000000p-3f, -0x1.9995980000000p-3f,
      0x1.3333340000000p-2f, -0x1.7305700000000p-3f, -0x1.104f100000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -0.7f, 0.3f, "MIN_FIRST", false,
     {-0x1.6667660000000p-1f, -0x1.99a1980000000p-3f, -0x1.9999980000000p-3f,
      0x1.3331340000000p-2f, -0x1.7309720000000p-3f, -0x1.1051100000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -0.7f, 0.3f, "SCALED", false,
     {-0x1.6666660000000p-1f, -0x1.6666660000000p-16f, 0x0.0p+0f,
      0x1.66639a0000000p-1f, 0x1.afe6660000000p-6f, -0x1.7a16660000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, -0.7f, 0.3f, "SCALED", true,
     {-0x1.6669320000000p-1f, -0x1.6669320000000p-16f, 0x0.0p+0f,
      0x1.6666660000000p-1f, 0x1.afe9c40000000p-6f, -0x1.7a195a0000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, 0.5f, 0.5f, "MIN_COMBINED", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, 0.5f, 0.5f, "MIN_FIRST", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, 0.5f, 0.5f, "SCALED", false,
     {-0x1.0002000000000p-1f, -0x1.0002000000000p-16f, 0x0.0p+0f,
      0x1.0000000000000p-1f, 0x1.3482680000000p-6f, -0x1.0e121c0000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT16, 0.5f, 0.5f, "SCALED", true,
     {-0x1.0002000000000p-1f, -0x1.0002000000000p-16f, 0x0.0p+0f,
      0x1.0000000000000p-1f, 0x1.3482680000000p-6f, -0x1.0e121c0000000p-4f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -1.5f, 2.25f, "MIN_COMBINED", false,
     {-0x1.8000000000000p+0f, -0x1.7ffc400000000p+0f, 0x1.8007800000000p-2f,
      0x1.2000000000000p+1f, -0x1.6dec6e0000000p+0f, 0x1.9bbadc0000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -1.5f, 2.25f, "MIN_FIRST", false,
     {-0x1.8000000000000p+0f, -0x1.7ffc400000000p+0f, 0x1.8007800000000p-2f,
      0x1.2000000000000p+1f, -0x1.6dec6e0000000p+0f, 0x1.9bbadc0000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -1.5f, 2.25f, "SCALED", false,
     {0x0.0p+0f, 0x1.2001200000000p-15f, 0x1.2001200000000p+0f,
      0x1.2000000000000p+1f, 0x1.5b115c0000000p-5f, 0x1.dd701e0000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -1.5f, 2.25f, "SCALED", true,
     {0x0.0p+0f, 0x1.2001200000000p-15f, 0x1.2001200000000p+0f,
      0x1.2000000000000p+1f, 0x1.5b115c0000000p-5f, 0x1.dd701e0000000p+0f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -0.7f, 0.3f, "MIN_COMBINED", false,
     {-0x1.6666660000000p-1f, -0x1.6664660000000p-1f, -0x1.9995980000000p-3f,
      0x1.3333340000000p-2f, -0x1.5cc25c0000000p-1f, 0x1.07f5080000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -0.7f, 0.3f, "MIN_FIRST", false,
     {-0x1.6667660000000p-1f, -0x1.6665660000000p-1f, -0x1.9999980000000p-3f,
      0x1.3331340000000p-2f, -0x1.5cc35c0000000p-1f, 0x1.07f1080000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -0.7f, 0.3f, "SCALED", false,
     {0x0.0p+0f, 0x1.3334680000000p-18f, 0x1.3334680000000p-3f,
      0x1.3333340000000p-2f, 0x1.7234a80000000p-8f, 0x1.fd44660000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, -0.7f, 0.3f, "SCALED", true,
     {0x0.0p+0f, 0x1.3334680000000p-18f, 0x1.3334680000000p-3f,
      0x1.3333340000000p-2f, 0x1.7234a80000000p-8f, 0x1.fd44660000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, 0.5f, 0.5f, "MIN_COMBINED", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, 0.5f, 0.5f, "MIN_FIRST", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, 0.5f, 0.5f, "SCALED", false,
     {0x0.0p+0f, 0x1.0001000000000p-17f, 0x1.0001000000000p-2f,
      0x1.0000000000000p-1f, 0x1.3481340000000p-7f, 0x1.a863a80000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT16, 0.5f, 0.5f, "SCALED", true,
     {0x0.0p+0f, 0x1.0001000000000p-17f, 0x1.0001000000000p-2f,
      0x1.0000000000000p-1f, 0x1.3481340000000p-7f, 0x1.a863a80000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -1.5f, 2.25f, "MIN_COMBINED", false,
     {-0x1.8000000000000p+0f, 0x1.8000000000000p-2f, 0x1.8000000000000p-2f,
      0x1.2000000000000p+1f, 0x1.ee61000000000p-2f, 0x1.7f1df00000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -1.5f, 2.25f, "MIN_FIRST", false,
     {-0x1.8000000000000p+0f, 0x1.8000000000000p-2f, 0x1.8000000000000p-2f,
      0x1.2000000000000p+1f, 0x1.ee61040000000p-2f, 0x1.7f1df20000000p-2f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -1.5f, 2.25f, "SCALED", false,
     {-0x1.2000000000000p+1f, -0x1.6800000000000p-28f, 0x1.f800000000000p-28f,
      -0x1.2000000000000p+1f, 0x1.08e8d80000000p-3f, -0x1.0f446c0000000p-10f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -1.5f, 2.25f, "SCALED", true,
     {-0x1.2000000000000p+1f, -0x1.6800000000000p-28f, 0x1.f800000000000p-28f,
      -0x1.2000000000000p+1f, 0x1.08e8d80000000p-3f, -0x1.0f446c0000000p-10f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -0.7f, 0.3f, "MIN_COMBINED", false,
     {-0x1.6666660000000p-1f, -0x1.9999980000000p-3f, -0x1.9999980000000p-3f,
      0x1.3333340000000p-2f, -0x1.5ebb300000000p-3f, -0x1.9a12280000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -0.7f, 0.3f, "MIN_FIRST", false,
     {-0x1.6666660000000p-1f, -0x1.9999980000000p-3f, -0x1.9999980000000p-3f,
      0x1.3333340000000p-2f, -0x1.5ebb300000000p-3f, -0x1.9a12280000000p-3f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -0.7f, 0.3f, "SCALED", false,
     {-0x1.6666660000000p-1f, -0x1.c000000000000p-30f, 0x1.39999a0000000p-29f,
      -0x1.6666660000000p-1f, 0x1.49aa4a0000000p-5f, -0x1.5193ba0000000p-12f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, -0.7f, 0.3f, "SCALED", true,
     {-0x1.6666660000000p-1f, -0x1.c000000000000p-30f, 0x1.39999a0000000p-29f,
      -0x1.6666660000000p-1f, 0x1.49aa4a0000000p-5f, -0x1.5193ba0000000p-12f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, 0.5f, 0.5f, "MIN_COMBINED", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, 0.5f, 0.5f, "MIN_FIRST", false,
     {0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f,
      0x1.0000000000000p-1f, 0x1.0000000000000p-1f, 0x1.0000000000000p-1f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, 0.5f, 0.5f, "SCALED", false,
     {-0x1.0000000000000p-1f, -0x1.4000000000000p-30f, 0x1.c000000000000p-30f,
      -0x1.0000000000000p-1f, 0x1.d6f3460000000p-6f, -0x1.e240c00000000p-13f}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, 0.5f, 0.5f, "SCALED", true,
     {-0x1.0000000000000p-1f, -0x1.4000000000000p-30f, 0x1.c000000000000p-30f,
      -0x1.0000000000000p-1f, 0x1.d6f3460000000p-6f, -0x1.e240c00000000p-13f}},
};
static const dq_pc PER_CHANNEL[] = {
    {1, "MIN_COMBINED", false,
     {-0x1.0000000000000p+0f, -0x1.fdfdfc0000000p-2f, 0x1.7d7d800000000p-1f,
      0x1.8282840000000p-1f, -0x1.d999980000000p+0f, -0x1.a222200000000p-1f,
      0x1.0000000000000p+0f, 0x1.9393980000000p-1f, -0x1.cdcdcc0000000p-3f,
      0x1.9b9b9c0000000p-1f, -0x1.f333300000000p+0f, -0x1.2aaaa80000000p+0f}},
    {1, "SCALED", false,
     {-0x1.0204080000000p+0f, -0x1.0204080000000p-1f, -0x1.0204080000000p-6f,
      0x0.0p+0f, 0x1.0000000000000p-5f, 0x1.f800000000000p+0f,
      0x1.0000000000000p+0f, 0x1.93264c0000000p-1f, -0x1.93264c0000000p+0f,
      0x1.42850a0000000p-4f, -0x1.4000000000000p-3f, 0x1.5000000000000p+0f}},
    {1, "SCALED", true,
     {-0x1.0204080000000p+0f, -0x1.0204080000000p-1f, -0x1.0204080000000p-6f,
      0x0.0p+0f, 0x1.0204080000000p-5f, 0x1.fbf7f00000000p+0f,
      0x1.0000000000000p+0f, 0x1.93264c0000000p-1f, -0x1.93264c0000000p+0f,
      0x1.42850a0000000p-4f, -0x1.42850a0000000p-3f, 0x1.52a54a0000000p+0f}},
    {0, "MIN_COMBINED", false,
     {-0x1.8000000000000p+1f, -0x1.7e7e7e0000000p+0f, -0x1.8182000000000p-7f,
      0x1.8182000000000p-7f, 0x1.2121800000000p-5f, 0x1.7e7e800000000p+0f,
      0x1.99999c0000000p-3f, 0x1.588bc00000000p-3f, -0x1.12ac460000000p-4f,
      0x1.ce9b6c0000000p-5f, 0x1.6e3b0c0000000p-5f, 0x1.99999e0000000p-4f}},
    {0, "SCALED", false,
     {-0x1.83060c0000000p+1f, -0x1.83060c0000000p+0f, -0x1.83060c0000000p-6f,
      0x0.0p+0f, 0x1.83060c0000000p-6f, 0x1.7cf9f40000000p+0f,
      0x1.99999a0000000p-3f, 0x1.42850a0000000p-3f, -0x1.42850a0000000p-3f,
      0x1.0204080000000p-7f, -0x1.0204080000000p-7f, 0x1.0eeaa20000000p-4f}},
    {0, "SCALED", true,
     {-0x1.83060c0000000p+1f, -0x1.83060c0000000p+0f, -0x1.83060c0000000p-6f,
      0x0.0p+0f, 0x1.83060c0000000p-6f, 0x1.7cf9f40000000p+0f,
      0x1.99999a0000000p-3f, 0x1.42850a0000000p-3f, -0x1.42850a0000000p-3f,
      0x1.0204080000000p-7f, -0x1.0204080000000p-7f, 0x1.0eeaa20000000p-4f}},
    {2, "MIN_COMBINED", false,
     {-0x1.0000000000000p+0f, -0x1.5f5f600000000p+0f, 0x1.f5f6000000000p-3f,
      -0x1.7d7d7c0000000p-1f, 0x1.0f0f100000000p-2f, -0x1.0505000000000p-3f,
      0x1.8000000000000p+0f, 0x1.e1e1e00000000p-3f, -0x1.7373740000000p-1f,
      -0x1.6464640000000p-1f, 0x1.a5a5b00000000p-3f, -0x1.5555500000000p-2f}},
    {2, "SCALED", false,
     {-0x1.83060c0000000p+0f, -0x1.0000000000000p+0f, -0x1.83060c0000000p-7f,
      0x0.0p+0f, 0x1.83060c0000000p-7f, 0x1.f800000000000p-1f,
      0x1.8000000000000p+0f, 0x1.9000000000000p+0f, -0x1.2e5cba0000000p+0f,
      0x1.4000000000000p-4f, -0x1.e3c7900000000p-5f, 0x1.5000000000000p-1f}},
    {2, "SCALED", true,
     {-0x1.83060c0000000p+0f, -0x1.0204080000000p+0f, -0x1.83060c0000000p-7f,
      0x0.0p+0f, 0x1.83060c0000000p-7f, 0x1.fbf7f00000000p-1f,
      0x1.8000000000000p+0f, 0x1.93264c0000000p+0f, -0x1.2e5cba0000000p+0f,
      0x1.42850a0000000p-4f, -0x1.e3c7900000000p-5f, 0x1.52a54a0000000p-1f}},
};
static const dq_bf BF16[] = {
    {TENSORFLOW__DATA_TYPE__DT_QINT8, {0xbfc0, 0x3ebc, 0x3ec4, 0x3ecb, 0x4010, 0x3fc2}},
    {TENSORFLOW__DATA_TYPE__DT_QUINT8, {0xbfc0, 0xbfbe, 0x3ec4, 0x4010, 0xbebc, 0x3fb8}},
    {TENSORFLOW__DATA_TYPE__DT_QINT32, {0xbfc0, 0x3ec0, 0x3ec0, 0x4010, 0x3ef7, 0x3ec0}},
};

static gn_graph *dq_graph(int32_t dt, const char *mode, bool narrow, int axis, const char *out_dt)
{
    char attrs[512];
    snprintf(attrs, sizeof attrs,
             "attr { key: 'T' value { type: %s } } attr { key: 'mode' value { s: '%s' } } "
             "attr { key: 'narrow_range' value { b: %s } } attr { key: 'axis' value { i: %d } } "
             "attr { key: 'dtype' value { type: %s } }",
             dt_attr(dt), mode, narrow ? "true" : "false", axis, out_dt);
    const char *dts[3] = {dt_attr(dt), "DT_FLOAT", "DT_FLOAT"};
    return gn_pt_kgraph("Dequantize", 3, dts, attrs, 0);
}

static void expect_bits(const gn__tensor *t, const float *want, int64_t n, const char *what)
{
    assert_int_equal(t->dtype, DT_FLOAT);
    const float *v = t->data;
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&v[i], &want[i], 4))
            fail_msg("%s element %lld: got %a, want %a", what, (long long)i, (double)v[i], (double)want[i]);
}

static void test_per_tensor(void **state)
{
    (void)state;
    int64_t d6 = 6;
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const dq_case *q = &CASES[k];
        gn_graph *g = dq_graph(q->dtype, q->mode, q->narrow, -1, "DT_FLOAT");
        gn__tensor in[3] = {gn_pt_ktensor(q->dtype, 1, &d6, input_of(q->dtype)),
                            gn_pt_ktensor(DT_FLOAT, 0, NULL, &q->lo), gn_pt_ktensor(DT_FLOAT, 0, NULL, &q->hi)};
        gn__tensor out[1];
        char what[96];
        snprintf(what, sizeof what, "%s [%g, %g] %s narrow=%d", dt_attr(q->dtype), (double)q->lo, (double)q->hi,
                 q->mode, q->narrow);
        for (uint32_t flags = 0; flags <= GN__K_REFERENCE; flags += GN__K_REFERENCE) {
            gn_pt_krun_ok(g, in, 3, out, 1, flags);
            assert_int_equal(out[0].rank, 1);
            assert_int_equal(out[0].dims[0], 6);
            expect_bits(&out[0], q->want, 6, what);
            gn_pt_krelease(out, 1);
        }
        gn_graph_free(g);
    }
}

static const float PC_MIN[3][3] = {{-3.0f, -0.1f}, {-1.0f, -0.5f, -4.0f}, {-1.0f, -2.0f}};
static const float PC_MAX[3][3] = {{3.0f, 0.2f}, {1.0f, 2.0f, 0.25f}, {1.5f, 0.5f}};

static void test_per_channel_and_bfloat16(void **state)
{
    (void)state;
    const int64_t dims[3] = {2, 3, 2};
    for (size_t k = 0; k < sizeof PER_CHANNEL / sizeof PER_CHANNEL[0]; k++) {
        const dq_pc *q = &PER_CHANNEL[k];
        gn_graph *g = dq_graph(TENSORFLOW__DATA_TYPE__DT_QINT8, q->mode, q->narrow, q->axis, "DT_FLOAT");
        int64_t ns = dims[q->axis];
        gn__tensor in[3] = {gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_QINT8, 3, dims, IN_PC),
                            gn_pt_ktensor(DT_FLOAT, 1, &ns, PC_MIN[q->axis]),
                            gn_pt_ktensor(DT_FLOAT, 1, &ns, PC_MAX[q->axis])};
        gn__tensor out[1];
        gn_pt_krun_ok(g, in, 3, out, 1, GN__K_REFERENCE);
        assert_int_equal(out[0].rank, 3);
        char what[64];
        snprintf(what, sizeof what, "axis %d %s narrow=%d", q->axis, q->mode, q->narrow);
        expect_bits(&out[0], q->want, 12, what);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    int64_t d6 = 6;
    const float lo = -1.5f, hi = 2.25f;
    for (size_t k = 0; k < sizeof BF16 / sizeof BF16[0]; k++) {
        gn_graph *g = dq_graph(BF16[k].dtype, "MIN_COMBINED", false, -1, "DT_BFLOAT16");
        gn__tensor in[3] = {gn_pt_ktensor(BF16[k].dtype, 1, &d6, input_of(BF16[k].dtype)),
                            gn_pt_ktensor(DT_FLOAT, 0, NULL, &lo), gn_pt_ktensor(DT_FLOAT, 0, NULL, &hi)};
        gn__tensor out[1];
        gn_pt_krun_ok(g, in, 3, out, 1, 0);
        assert_int_equal(out[0].dtype, TENSORFLOW__DATA_TYPE__DT_BFLOAT16);
        assert_memory_equal(out[0].data, BF16[k].want, sizeof BF16[k].want);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
}

static void expect_dq_error(const char *mode, int axis, const char *out_dt, int64_t nmin, int64_t nmax, gn_status code,
                            const char *msg)
{
    const int64_t dims[3] = {2, 3, 2};
    static const float r[3] = {0.0f, 0.5f, 1.0f};
    gn_graph *g = dq_graph(TENSORFLOW__DATA_TYPE__DT_QINT8, mode, false, axis, out_dt);
    gn__tensor in[3] = {gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_QINT8, 3, dims, IN_PC),
                        gn_pt_ktensor(DT_FLOAT, nmin < 0 ? 0 : 1, &nmin, r),
                        gn_pt_ktensor(DT_FLOAT, nmax < 0 ? 0 : 1, &nmax, r)};
    gn_pt_kexpect_error(g, in, 3, 1, code, msg);
    gn_graph_free(g);
}

/* TensorFlow's messages: the first five as TensorFlow 2.21 prints them
 * (tools/make_dequantize_values.py); the last two are dequantize_op.cc's
 * (TensorFlow's op definition refuses those attrs before its kernel). */
static void test_errors(void **state)
{
    (void)state;
    expect_dq_error("MIN_COMBINED", 3, "DT_FLOAT", 1, 1, GN_ERR_GRAPH,
                    "node 'n' (Dequantize): Axis must be less than input dimension(3), got 3");
    expect_dq_error("MIN_COMBINED", 1, "DT_FLOAT", 2, 3, GN_ERR_GRAPH,
                    "node 'n' (Dequantize): input_min_tensor must have as many elements as input on the "
                    "dequantization axis (1), got 2, expected 3");
    expect_dq_error("MIN_COMBINED", 1, "DT_FLOAT", 3, 2, GN_ERR_GRAPH,
                    "node 'n' (Dequantize): input_max_tensor must have as many elements as input on the "
                    "dequantization axis (1), got 2, expected 3");
    expect_dq_error("MIN_FIRST", 1, "DT_FLOAT", 3, 3, GN_ERR_UNSUPPORTED,
                    "node 'n' (Dequantize): MIN_FIRST mode is not implemented for Dequantize with axis != -1.");
    expect_dq_error("SCALED", -1, "DT_BFLOAT16", -1, -1, GN_ERR_GRAPH,
                    "node 'n' (Dequantize): When output type is bfloat16, Mode string must be 'MIN_COMBINED', is "
                    "'SCALED'");
    expect_dq_error("MAX", -1, "DT_FLOAT", -1, -1, GN_ERR_GRAPH,
                    "node 'n' (Dequantize): Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is 'MAX'");
    expect_dq_error("SCALED", -1, "DT_HALF", -1, -1, GN_ERR_GRAPH,
                    "node 'n' (Dequantize): Output type must be bfloat16 or float, is 'half'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_tensor),
        cmocka_unit_test(test_per_channel_and_bfloat16),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
