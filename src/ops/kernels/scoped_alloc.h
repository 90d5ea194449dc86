/* The scoped allocator's internal ops on the CPU (private): the layout of a
 * backing buffer and views into it, shared by the kernels
 * (kernels/scoped_alloc.c) and the executor (runtime/cpu/exec.c), which lets
 * the producers a _ScopedAllocator serves write straight into their fields. */
#ifndef GN_OPS_KERNELS_SCOPED_ALLOC_H
#define GN_OPS_KERNELS_SCOPED_ALLOC_H

#include "ops/kernel.h"

/* TensorFlow's ScopedAllocatorMgr::PopulateFields: field i starts where field
 * i - 1 ended, rounded up to 64 bytes. Returns the end of field `upto - 1`
 * rounded up (the buffer's size when upto is the field count); *start gets
 * field upto's offset. */
#define GN__SA_ALIGN 64
static inline size_t gn__sa_align(size_t bytes)
{
    return bytes % GN__SA_ALIGN ? bytes + (GN__SA_ALIGN - bytes % GN__SA_ALIGN) : bytes;
}

/* A buffer header over [offset, offset + size) of parent (a reference on
 * parent, dropped with the view); NULL on OOM. */
gn__buffer *gn__buffer_view(gn__buffer *parent, size_t offset, size_t size);

/* Field i's byte offset in a _ScopedAllocatorConcat's backing buffer, from
 * the sizes of inputs 1..i (in[0] is the backing buffer). */
size_t gn__sa_concat_offset(const gn__tensor *in, uint32_t i);
/* Does input i (>= 1) of a _ScopedAllocatorConcat already lie in its field of
 * the backing buffer (the producer wrote there)? */
bool gn__sa_concat_in_place(const gn__tensor *in, uint32_t i);

#endif
