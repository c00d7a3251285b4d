# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled fast path of :mod:`synprep.dataset.data`: gathering a batch's rows out of the
memory-mapped shard buffers and padding them, one pass over the data each, with no
index arrays.

It computes exactly what the numpy reference path in :mod:`synprep.dataset.data` computes
(``ragged_arange`` + ``take`` for the gathers, scatters into ``np.full`` for the
padding); the tests check that both give identical batches on real shards.
``SYNPREP_PURE_PYTHON=1`` forces the numpy path.

Every function checks its indices against the buffers it was given and raises
``ValueError`` instead of reading or writing out of bounds (the shards are
validated when opened, so this never fires on our own files).
"""

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy


def gather(const unsigned char[::1] src, Py_ssize_t itemsize, const int32_t[::1] offsets,
           const int64_t[::1] rows, unsigned char[::1] out):
    """Concatenate ``values[offsets[r]:offsets[r + 1]]`` for ``r`` in ``rows`` into
    ``out`` (all as bytes; ``itemsize`` = bytes per value). Returns the bytes written."""
    cdef Py_ssize_t i, r, a, b, k = 0
    cdef Py_ssize_t nrows = offsets.shape[0] - 1
    for i in range(rows.shape[0]):
        r = rows[i]
        if r < 0 or r >= nrows:
            raise ValueError(f"row {r} out of range")
        a = offsets[r] * itemsize
        b = offsets[r + 1] * itemsize
        if a < 0 or b < a or b > src.shape[0] or k + (b - a) > out.shape[0]:
            raise ValueError("list offsets outside the values buffer")
        if b > a:
            memcpy(&out[k], &src[a], b - a)
        k += b - a
    return k


def gather_nested(const unsigned char[::1] src, Py_ssize_t itemsize, const int32_t[::1] outer,
                  const int32_t[::1] inner, const int64_t[::1] rows, unsigned char[::1] out,
                  int64_t[::1] plens):
    """Root paths (list<list>) of ``rows``: the rows' words' values concatenated into
    ``out`` (bytes) and each word's path length into ``plens``. The words of a row
    are contiguous, and so are their values. Returns (bytes written, words written)."""
    cdef Py_ssize_t i, r, w, w0, w1, a, b, k = 0, m = 0
    cdef Py_ssize_t nrows = outer.shape[0] - 1
    cdef Py_ssize_t nwords = inner.shape[0] - 1
    for i in range(rows.shape[0]):
        r = rows[i]
        if r < 0 or r >= nrows:
            raise ValueError(f"row {r} out of range")
        w0 = outer[r]
        w1 = outer[r + 1]
        if w0 < 0 or w1 < w0 or w1 > nwords or m + (w1 - w0) > plens.shape[0]:
            raise ValueError("list offsets outside the values buffer")
        for w in range(w0, w1):
            plens[m] = inner[w + 1] - inner[w]
            m += 1
        a = inner[w0] * itemsize
        b = inner[w1] * itemsize
        if a < 0 or b < a or b > src.shape[0] or k + (b - a) > out.shape[0]:
            raise ValueError("list offsets outside the values buffer")
        if b > a:
            memcpy(&out[k], &src[a], b - a)
        k += b - a
    return k, m


ctypedef fused padded_t:
    int64_t
    float


cdef int _pad(const padded_t[::1] values, const int64_t[::1] lens, padded_t[:, ::1] out,
              padded_t pad, padded_t append, bint has_append) except -1:
    # specialised at compile time for each type; the def wrappers below call it
    # without the run-time dispatch of a fused def function
    cdef Py_ssize_t b, j, n, k = 0
    cdef Py_ssize_t width = out.shape[1]
    if lens.shape[0] != out.shape[0]:
        raise ValueError("one length per output row expected")
    for b in range(out.shape[0]):
        n = lens[b]
        if n < 0 or n + has_append > width or k + n > values.shape[0]:
            raise ValueError("row longer than the output or the values")
        if n:
            memcpy(&out[b, 0], &values[k], n * sizeof(padded_t))
        k += n
        j = n
        if has_append:
            out[b, j] = append
            j += 1
        while j < width:
            out[b, j] = pad
            j += 1
    return 0


def pad_i64(const int64_t[::1] values, const int64_t[::1] lens, int64_t[:, ::1] out,
            int64_t pad, int64_t append, bint has_append):
    """Row ``b`` of ``out``: its ``lens[b]`` values, ``append`` (if ``has_append``),
    then ``pad`` to the end."""
    _pad(values, lens, out, pad, append, has_append)


def pad_f32(const float[::1] values, const int64_t[::1] lens, float[:, ::1] out,
            float pad, float append, bint has_append):
    """:func:`pad_i64` for float32 values."""
    _pad(values, lens, out, pad, append, has_append)


def root_paths(const int64_t[::1] vals, const int64_t[::1] plens, const int64_t[::1] words,
               const int64_t[::1] wv, const int64_t[::1] wl, int64_t[:, :, ::1] out, int64_t pad):
    """``out[b, p]`` = the root path of the word of piece ``p`` of row ``b``, then
    ``pad``; rows past their pieces are all ``pad``. ``vals``/``plens``: the paths
    of all words of all rows, concatenated, and their lengths; ``words``: words per
    row; ``wv``/``wl``: per piece its row-local word, and pieces per row."""
    cdef Py_ssize_t B = out.shape[0], S = out.shape[1], D = out.shape[2]
    cdef Py_ssize_t W = plens.shape[0]
    cdef Py_ssize_t b, p, d, g, n, s, base = 0, k = 0, total = 0
    cdef int64_t[::1] start
    import numpy as np

    if words.shape[0] != B or wl.shape[0] != B:
        raise ValueError("one word count and one piece count per output row expected")
    start_arr = np.empty(W, dtype=np.int64)
    start = start_arr
    for g in range(W):
        start[g] = total
        total += plens[g]
    if total > vals.shape[0]:
        raise ValueError("path lengths exceed the path values")
    for b in range(B):
        n = wl[b]
        if n < 0 or n > S or k + n > wv.shape[0]:
            raise ValueError("row has more pieces than the output or the word ids")
        for p in range(n):
            g = base + wv[k]
            k += 1
            if wv[k - 1] < 0 or wv[k - 1] >= words[b] or g >= W:
                raise ValueError("piece's word id outside its row's words")
            s = start[g]
            d = 0
            while d < plens[g] and d < D:
                out[b, p, d] = vals[s + d]
                d += 1
            while d < D:
                out[b, p, d] = pad
                d += 1
        for p in range(n, S):
            for d in range(D):
                out[b, p, d] = pad
        base += words[b]
