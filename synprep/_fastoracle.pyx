# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled fast path of ``synprep oracle``: CoNLL-U bytes in, output bytes out.

It implements, for *valid* sentences only, exactly what the Python reference path
does (:mod:`synprep.syntax.conllu` -> :mod:`synprep.syntax.tree` -> :mod:`synprep.syntax.transitions` ->
:mod:`synprep.syntax.oracle_io`): the same validation, multiword-token merge, label set,
projectivity test, lifting, static oracle and the same bytes of output (``text``,
or ``jsonl`` equal to ``json.dumps(record, ensure_ascii=False)``).

It never reports an error itself. Whenever a sentence is not plainly valid, or uses
something the kernel leaves to Python (non-ASCII IDs or heads, a sentence of more
than MAXW words, a multiword merge that makes a cycle, a control character or a line
break inside a line, a ``# text`` of nothing, sentences run together without the blank
line between them (:mod:`synprep.syntax.runon`: their block is one invalid block here),
...), it stops and returns
the byte range of that sentence; the caller runs the Python path on it, which
produces the exact error or record, and calls the kernel again after it. The tests
check that both paths give identical bytes on every UD file we have.

Input: ``data`` holds whole lines; ``pos`` is where to start (a sentence start).
The kernel consumes sentences terminated by a blank line; at the end of ``data``
it returns NEED_MORE (or FALLBACK for the unterminated tail when ``eof``).
"""

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memcmp

cdef enum:
    MAXW = 1024
    NEED_MORE = 0
    FALLBACK = 1

cdef struct Buf:
    char* data
    Py_ssize_t len
    Py_ssize_t cap

cdef int buf_grow(Buf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef char* p
    if b.len + extra <= b.cap:
        return 0
    cap = b.cap * 2
    if cap < b.len + extra + 4096:
        cap = b.len + extra + 4096
    p = <char*>realloc(b.data, cap)
    if p == NULL:
        raise MemoryError()
    b.data = p
    b.cap = cap
    return 0

cdef inline int put(Buf* b, const char* s, Py_ssize_t n) except -1:
    if b.len + n > b.cap:
        buf_grow(b, n)
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0

cdef inline int putb(Buf* b, bytes x) except -1:
    return put(b, x, len(x))

cdef inline int putc(Buf* b, char c) except -1:
    if b.len + 1 > b.cap:
        buf_grow(b, 1)
    b.data[b.len] = c
    b.len += 1
    return 0

cdef int put_int(Buf* b, long v) except -1:
    cdef char tmp[24]
    cdef int i = 0
    cdef bint neg = v < 0
    if neg:
        v = -v
    if v == 0:
        tmp[0] = 48
        i = 1
    while v > 0:
        tmp[i] = <char>(48 + v % 10)
        v //= 10
        i += 1
    buf_grow(b, i + 1)
    if neg:
        b.data[b.len] = 45
        b.len += 1
    while i > 0:
        i -= 1
        b.data[b.len] = tmp[i]
        b.len += 1
    return 0

cdef const char* HEX = "0123456789abcdef"

cdef int put_json_body(Buf* b, const unsigned char* s, Py_ssize_t n) except -1:
    """The inside of a JSON string, escaped as json.dumps(ensure_ascii=False) does."""
    cdef Py_ssize_t i
    cdef unsigned char c
    buf_grow(b, n * 6)
    for i in range(n):
        c = s[i]
        if c == 34 or c == 92:
            b.data[b.len] = 92
            b.data[b.len + 1] = c
            b.len += 2
        elif c < 32:
            b.data[b.len] = 92
            if c == 10:
                b.data[b.len + 1] = 110  # n
                b.len += 2
            elif c == 13:
                b.data[b.len + 1] = 114  # r
                b.len += 2
            elif c == 9:
                b.data[b.len + 1] = 116  # t
                b.len += 2
            elif c == 8:
                b.data[b.len + 1] = 98  # b
                b.len += 2
            elif c == 12:
                b.data[b.len + 1] = 102  # f
                b.len += 2
            else:
                b.data[b.len + 1] = 117  # u
                b.data[b.len + 2] = 48
                b.data[b.len + 3] = 48
                b.data[b.len + 4] = HEX[c >> 4]
                b.data[b.len + 5] = HEX[c & 15]
                b.len += 6
        else:
            b.data[b.len] = c
            b.len += 1
    return 0


cdef int put_json_str(Buf* b, const unsigned char* s, Py_ssize_t n) except -1:
    """A JSON string, quotes included."""
    putc(b, 34)
    put_json_body(b, s, n)
    putc(b, 34)
    return 0

cdef inline bint is_ws(unsigned char c) nogil:
    # the ASCII characters that str.isspace() / str.strip() treat as whitespace
    return c == 32 or (9 <= c <= 13) or (28 <= c <= 31)

cdef inline int comment_key(const unsigned char* src, Py_ssize_t ls, Py_ssize_t le, const char* key, int klen) nogil:
    # whether the comment line [ls, le) is "# KEY = ..." as the Python reader reads it
    # (k, eq, v = line[1:].partition("="); k.strip() == KEY): 1 yes, 0 no, -1 not sure
    # (a non-ASCII character in its key: Python strips Unicode whitespace; left to it)
    cdef Py_ssize_t k2 = ls + 1, a, b, kk
    while k2 < le and src[k2] != 61:
        k2 += 1
    if k2 >= le:
        return 0
    a = ls + 1
    b = k2
    for kk in range(a, b):
        if src[kk] >= 128:
            return -1
    while a < b and is_ws(src[a]):
        a += 1
    while b > a and is_ws(src[b - 1]):
        b -= 1
    return 1 if b - a == klen and memcmp(src + a, key, klen) == 0 else 0

cdef inline bint blank_value(const unsigned char* src, Py_ssize_t ls, Py_ssize_t le) nogil:
    # whether the value of the comment line [ls, le) (after its first "=") is nothing as
    # the Python reader's str.strip() sees it: whitespace alone, ASCII or Unicode's
    # (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)
    cdef Py_ssize_t a = ls + 1
    cdef unsigned char c
    while a < le and src[a] != 61:
        a += 1
    a += 1
    while a < le:
        c = src[a]
        if is_ws(c):
            a += 1
        elif c == 0xC2 and a + 1 < le and (src[a + 1] == 0x85 or src[a + 1] == 0xA0):
            a += 2
        elif c == 0xE1 and a + 2 < le and src[a + 1] == 0x9A and src[a + 2] == 0x80:
            a += 3
        elif c == 0xE2 and a + 2 < le and ((src[a + 1] == 0x80 and (src[a + 2] <= 0x8A or src[a + 2] == 0xA8
                                                                   or src[a + 2] == 0xA9 or src[a + 2] == 0xAF))
                                           or (src[a + 1] == 0x81 and src[a + 2] == 0x9F)):
            a += 3
        elif c == 0xE3 and a + 2 < le and src[a + 1] == 0x80 and src[a + 2] == 0x80:
            a += 3
        else:
            return False
    return True

cdef inline bint control_at(const unsigned char* src, Py_ssize_t k, Py_ssize_t le) nogil:
    # a character of synprep.syntax.conllu._CONTROL starts at k (< le, the line's end
    # without its CRLF's CR): a C0 control but TAB (a CR here is inside the line), DEL,
    # NEL (C2 85), LINE or PARAGRAPH SEPARATOR (E2 80 A8/A9); the kernel leaves the
    # sentence to Python, which names it
    cdef unsigned char c = src[k]
    if c < 32:
        return c != 9
    if c == 127:
        return True
    if c == 0xC2:
        return k + 1 < le and src[k + 1] == 0x85
    if c == 0xE2:
        return k + 2 < le and src[k + 1] == 0x80 and (src[k + 2] == 0xA8 or src[k + 2] == 0xA9)
    return False

cdef inline bint ok_text_form(const unsigned char* src, Py_ssize_t a, Py_ssize_t b) nogil:
    # a FORM (or DEPREL) without whitespace: the text format separates its tokens by spaces,
    # and its readers (str.split, fairseq) split at any whitespace: a space, U+00A0, U+1680,
    # U+2000-U+200A, U+202F, U+205F, U+3000 (the controls among str.isspace()'s are refused
    # before); Python writes each as U+2581
    cdef Py_ssize_t k
    cdef unsigned char c
    for k in range(a, b):
        c = src[k]
        if c == 32:
            return False
        if c == 0xC2 and k + 1 < b and src[k + 1] == 0xA0:
            return False
        if c == 0xE1 and k + 2 < b and src[k + 1] == 0x9A and src[k + 2] == 0x80:
            return False
        if c == 0xE2 and k + 2 < b and ((src[k + 1] == 0x80 and (src[k + 2] <= 0x8A or src[k + 2] == 0xAF))
                                        or (src[k + 1] == 0x81 and src[k + 2] == 0x9F)):
            return False
        if c == 0xE3 and k + 2 < b and src[k + 1] == 0x80 and src[k + 2] == 0x80:
            return False
    return True

cdef inline bint is_root_label(const unsigned char* s, int n) nogil:
    """DEPREL ``root`` or ``root:<subtype>`` (Python's reader: the root's and no other word's)."""
    return n >= 4 and s[0] == 114 and s[1] == 111 and s[2] == 111 and s[3] == 116 and (n == 4 or s[4] == 58)


cdef inline int parse_uint(const unsigned char* s, Py_ssize_t n) nogil:
    """ASCII digits only, at most 9 of them, no leading zero (the plain integers of
    synprep.syntax.conllu._uint); -1 otherwise."""
    cdef int v = 0
    cdef Py_ssize_t i
    if n == 0 or n > 9 or (n > 1 and s[0] == 48):
        return -1
    for i in range(n):
        if s[i] < 48 or s[i] > 57:
            return -1
        v = v * 10 + (s[i] - 48)
    return v

cdef struct Sent:
    int n                   # syntactic words
    int m                   # output words
    int nmwt
    int heads[MAXW]
    Py_ssize_t form_off[MAXW]
    int form_len[MAXW]
    Py_ssize_t rel_off[MAXW]
    int rel_len[MAXW]
    int mwt_a[MAXW]
    int mwt_b[MAXW]
    Py_ssize_t mwt_off[MAXW]
    int mwt_len[MAXW]
    # output tree
    int oh[MAXW]
    Py_ssize_t of_off[MAXW]
    int of_len[MAXW]
    Py_ssize_t ol_off[MAXW]
    int ol_len[MAXW]
    # scratch
    int a1[MAXW]
    int a2[MAXW]
    int a3[MAXW]
    unsigned char st[MAXW]


cdef inline void span(int* heads, int i, int* l, int* r) nogil:
    """The interval an arc covers; words at 1..n, the artificial root at 0."""
    if heads[i] < 0:
        l[0] = 0
        r[0] = i + 1
    elif heads[i] < i:
        l[0] = heads[i] + 1
        r[0] = i + 1
    else:
        l[0] = i + 1
        r[0] = heads[i] + 1


cdef bint projective(int* heads, int n) nogil:
    """No two arcs cross (synprep.syntax.tree.is_projective)."""
    cdef int i, j, l1, r1, l2, r2
    for i in range(n):
        span(heads, i, &l1, &r1)
        for j in range(n):
            span(heads, j, &l2, &r2)
            if l1 < l2 and l2 < r1 and r1 < r2:
                return False
    return True


cdef inline bint is_ancestor(int* heads, int a, int k) nogil:
    while k >= 0:
        k = heads[k]
        if k == a:
            return True
    return False


cdef int lift_tree(int* heads, int n) nogil:
    """synprep.syntax.tree.lift: lift the shortest non-projective arc (ties: leftmost)."""
    cdef int lifts = 0, d, h, lo, hi, k, best, bestlen, length
    while True:
        best = -1
        bestlen = 1 << 30
        for d in range(n):
            h = heads[d]
            if h < 0:
                continue
            if h < d:
                lo = h
                hi = d
            else:
                lo = d
                hi = h
            length = hi - lo
            if length >= bestlen:
                continue
            for k in range(lo + 1, hi):
                if not is_ancestor(heads, h, k):
                    best = d
                    bestlen = length
                    break
        if best < 0:
            return lifts
        heads[best] = heads[heads[best]]
        lifts += 1


cdef int run_oracle(Sent* s, const unsigned char* src, Buf* out, bint jsonl) except -2:
    """Write the transitions of the output tree; -1 if the oracle gets stuck."""
    cdef int n = s.m, i = 0, sp = 0, s0, s1, k
    cdef int* missing = s.a1
    cdef int* stack = s.a2
    cdef int* heads = s.oh
    cdef bint first = True
    for k in range(n):
        missing[k] = 0
    for k in range(n):
        if heads[k] >= 0:
            missing[heads[k]] += 1
    while True:
        if sp >= 2:
            s0 = stack[sp - 1]
            s1 = stack[sp - 2]
            if heads[s1] == s0 and missing[s1] == 0:
                emit_arc(out, b"LEFT-ARC:", 9, src + s.ol_off[s1], s.ol_len[s1], jsonl, first)
                first = False
                missing[s0] -= 1
                stack[sp - 2] = s0
                sp -= 1
                continue
            if heads[s0] == s1 and missing[s0] == 0:
                emit_arc(out, b"RIGHT-ARC:", 10, src + s.ol_off[s0], s.ol_len[s0], jsonl, first)
                first = False
                missing[s1] -= 1
                sp -= 1
                continue
        if i < n:
            if not first:
                if jsonl:
                    putb(out, b", ")
                else:
                    putc(out, 32)
            first = False
            if jsonl:
                put_json_str(out, src + s.of_off[i], s.of_len[i])
            else:
                put(out, <const char*>(src + s.of_off[i]), s.of_len[i])
            stack[sp] = i
            sp += 1
            i += 1
            continue
        break
    return 0 if sp == 1 else -1


cdef int emit_arc(Buf* out, const char* name, int nlen, const unsigned char* lab, int llen, bint jsonl, bint first) except -1:
    if not first:
        if jsonl:
            putb(out, b", ")
        else:
            putc(out, 32)
    if jsonl:
        putc(out, 34)
        put(out, name, nlen)
        put_json_body(out, lab, llen)
        putc(out, 34)
    else:
        put(out, name, nlen)
        put(out, <const char*>lab, llen)
    return 0


def run(bytes data, Py_ssize_t pos, long line_no, bint eof, bint surface, bint universal,
        bint do_lift, bint jsonl, bytes path):
    """Process sentences of ``data`` from ``pos``.

    Returns (out, pos, line_no, status, fb_end, fb_lines, counts) where ``pos`` and
    ``line_no`` say where processing stopped, ``status`` is NEED_MORE (0) or
    FALLBACK (1: the caller must run Python on data[pos:fb_end], fb_lines lines),
    and counts = (sentences, written, nonprojective, dropped, lifted_sentences,
    lifted_arcs) for the sentences done here."""
    cdef const unsigned char* src = data
    cdef Py_ssize_t size = len(data)
    cdef Sent* s = <Sent*>malloc(sizeof(Sent))
    cdef Buf out
    cdef Py_ssize_t p, q, e, ls, le, sent_start, fs[10], fe[10], idoff = 0, k2
    cdef int nf, i, j, expected, mwt_end, enode_a, enode_b, wid, a, b, h, roots, root, r, kk, lifted, status = NEED_MORE
    cdef long sent_line, cur_line = line_no
    cdef int idlen = -1
    cdef bint ok, proj, in_span, has_id, seen_text
    cdef unsigned char c
    cdef long c_sent = 0, c_written = 0, c_nonproj = 0, c_dropped = 0, c_lsent = 0, c_larcs = 0
    cdef const unsigned char* lab
    cdef int llen
    cdef Py_ssize_t fb_end = 0
    cdef long fb_lines = 0
    if s == NULL:
        raise MemoryError()
    out.data = <char*>malloc(1 << 16)
    out.len = 0
    out.cap = 1 << 16
    if out.data == NULL:
        free(s)
        raise MemoryError()
    try:
        p = pos
        while True:
            # ---------------------------------------------------- one sentence block
            sent_start = p
            sent_line = cur_line
            # skip blank lines between sentences
            ok = True
            s.n = 0
            s.nmwt = 0
            expected = 1
            mwt_end = 0
            enode_a = -1
            enode_b = 0
            idlen = -1
            seen_text = False
            has_id = False
            q = p
            # scan lines until a blank line ends a non-empty block
            while True:
                if q >= size:
                    # end of data inside a block (or no block at all)
                    if q == sent_start or not eof:
                        status = NEED_MORE
                    else:
                        status = FALLBACK
                    break
                e = q
                while e < size and src[e] != 10:
                    e += 1
                if e >= size:
                    # a line without its newline: only at eof
                    if not eof:
                        status = NEED_MORE
                        q = size
                        break
                ls = q
                le = e
                if le > ls and src[le - 1] == 13:
                    le -= 1
                # blank?
                k2 = q
                while k2 < e and is_ws(src[k2]):
                    k2 += 1
                if k2 == e:
                    q = e + 1
                    cur_line += 1
                    if sent_start == ls:
                        # blank line before any content: skip it
                        sent_start = q
                        sent_line = cur_line
                        continue
                    status = -1  # block complete
                    break
                q = e + 1
                cur_line += 1
                if not ok:
                    continue  # keep scanning to the end of the block
                if src[ls] == 35:  # '#'
                    if s.n > 0 or s.nmwt > 0:
                        ok = False
                        continue
                    for k2 in range(ls, le):
                        if control_at(src, k2, le):
                            ok = False
                            break
                    if not ok:
                        continue
                    if le - ls >= 9 and memcmp(src + ls, b"# sent_id", 9) == 0:
                        # k, eq, v = line[1:].partition("="); k.strip() == "sent_id"
                        k2 = ls + 1
                        while k2 < le and src[k2] != 61:
                            k2 += 1
                        if k2 < le:
                            a = <int>(ls + 1)
                            b = <int>k2
                            while a < b and is_ws(src[a]):
                                a += 1
                            while b > a and is_ws(src[b - 1]):
                                b -= 1
                            for kk in range(a, b):
                                if src[kk] >= 128:
                                    ok = False
                            if ok and b - a == 7 and memcmp(src + a, b"sent_id", 7) == 0:
                                a = <int>(k2 + 1)
                                b = <int>le
                                while a < b and is_ws(src[a]):
                                    a += 1
                                while b > a and is_ws(src[b - 1]):
                                    b -= 1
                                if b == a or src[a] >= 128 or src[b - 1] >= 128 or idlen >= 0:
                                    ok = False  # (an empty id, a second sent_id: the Python reader's error names it)
                                for kk in range(a, b):
                                    if is_ws(src[kk]) or src[kk] >= 128:
                                        ok = False  # (whitespace inside the id, or a character that may be: Python decides)
                                        break
                                idoff = a
                                idlen = b - a
                    elif le - ls >= 6 and memcmp(src + ls, b"# text", 6) == 0:
                        r = comment_key(src, ls, le, b"text", 4)
                        if r != 0:
                            if r < 0 or seen_text or blank_value(src, ls, le):
                                ok = False  # (a second # text, or one of nothing: the Python reader's error names it)
                            seen_text = True
                    continue
                # token line: exactly ten tab-separated fields
                nf = 0
                fs[0] = ls
                k2 = ls
                while k2 < le:
                    c = src[k2]
                    if c == 9:
                        if nf >= 9:
                            nf = 99
                            break
                        fe[nf] = k2
                        nf += 1
                        fs[nf] = k2 + 1
                    elif (c < 32 or c == 127 or c == 0xC2 or c == 0xE2) and control_at(src, k2, le):
                        nf = 99  # Python names it
                        break
                    k2 += 1
                if nf != 9:
                    ok = False
                    continue
                fe[9] = le
                if not jsonl and not (ok_text_form(src, fs[1], fe[1]) and ok_text_form(src, fs[7], fe[7])):
                    ok = False  # Python writes whitespace in a FORM or DEPREL as U+2581 in the text format
                    continue
                wid = parse_uint(src + fs[0], fe[0] - fs[0])
                if wid >= 0:
                    if wid != expected or s.n >= MAXW:
                        ok = False
                        continue
                    if fe[7] == fs[7] or (fe[7] - fs[7] == 1 and src[fs[7]] == 95) or fe[1] == fs[1]:
                        ok = False  # empty DEPREL or empty FORM
                        continue
                    h = parse_uint(src + fs[6], fe[6] - fs[6])
                    if h < 0:
                        ok = False
                        continue
                    i = s.n
                    s.heads[i] = h
                    s.form_off[i] = fs[1]
                    s.form_len[i] = <int>(fe[1] - fs[1])
                    s.rel_off[i] = fs[7]
                    s.rel_len[i] = <int>(fe[7] - fs[7])
                    s.n += 1
                    expected += 1
                    continue
                # a range a-b or an empty node a.b
                k2 = fs[0]
                while k2 < fe[0] and src[k2] != 45:
                    k2 += 1
                if k2 < fe[0]:
                    a = parse_uint(src + fs[0], k2 - fs[0])
                    b = parse_uint(src + k2 + 1, fe[0] - k2 - 1)
                    if a < 0 or b < 0 or b <= a or a != expected or mwt_end >= expected or s.nmwt >= MAXW or fe[1] == fs[1]:
                        ok = False
                        continue
                    mwt_end = b
                    s.mwt_a[s.nmwt] = a - 1
                    s.mwt_b[s.nmwt] = b - 1
                    s.mwt_off[s.nmwt] = fs[1]
                    s.mwt_len[s.nmwt] = <int>(fe[1] - fs[1])
                    s.nmwt += 1
                    continue
                k2 = fs[0]
                while k2 < fe[0] and src[k2] != 46:
                    k2 += 1
                if k2 < fe[0]:
                    a = parse_uint(src + fs[0], k2 - fs[0])
                    b = parse_uint(src + k2 + 1, fe[0] - k2 - 1)
                    # an empty node: ignored, but in its place (N.1, N.2, ... after word N);
                    # Python names one that is not
                    if a < 0 or b < 0 or a != expected - 1 or b != (enode_b + 1 if enode_a == a else 1):
                        ok = False
                    enode_a = a
                    enode_b = b
                    continue
                ok = False
            if status != -1:
                # NEED_MORE or FALLBACK for an unterminated tail
                p = sent_start
                cur_line = sent_line
                if status == FALLBACK:
                    fb_end = size
                    fb_lines = 0  # the caller counts
                break
            # ------------------------------------------------ validate the tree
            if ok and s.n == 0:
                ok = False  # comments only (no sentence, or a sentence without words: Python says which)
            if ok and s.nmwt > 0 and s.mwt_b[s.nmwt - 1] >= s.n:
                ok = False
            if ok:
                roots = 0
                root = -1
                for i in range(s.n):
                    h = s.heads[i]
                    if h > s.n or h == i + 1:
                        ok = False
                        break
                    if is_root_label(src + s.rel_off[i], s.rel_len[i]) != (h == 0):
                        ok = False  # the root labelled otherwise, or root (root:x) on another word: Python names it
                        break
                    if h == 0:
                        roots += 1
                        root = i
                    s.heads[i] = h - 1
                if ok and roots != 1:
                    ok = False
            if ok:
                ok = reaches_root(s.heads, s.n, root, s.st)
            if ok:
                ok = build_output(s, src, surface, universal)
            if not ok:
                status = FALLBACK
                fb_end = q
                fb_lines = cur_line - sent_line
                p = sent_start
                cur_line = sent_line
                break
            # ------------------------------------------------ the record
            c_sent += 1
            proj = projective(s.oh, s.m)
            lifted = 0
            if not proj:
                c_nonproj += 1
            if jsonl:
                putb(&out, b'{"id": ')
                if idlen >= 0:
                    put_json_str(&out, src + idoff, idlen)
                else:
                    putc(&out, 34)
                    put_json_body(&out, <const unsigned char*>(<char*>path), len(path))
                    putc(&out, 58)
                    put_int(&out, sent_line)
                    putc(&out, 34)
                putb(&out, b', "words": [')
                for i in range(s.m):
                    if i:
                        putb(&out, b", ")
                    put_json_str(&out, src + s.of_off[i], s.of_len[i])
                if not proj and do_lift:
                    lifted = lift_tree(s.oh, s.m)
                putb(&out, b'], "heads": [')
                for i in range(s.m):
                    if i:
                        putb(&out, b", ")
                    put_int(&out, s.oh[i])
                putb(&out, b'], "labels": [')
                for i in range(s.m):
                    if i:
                        putb(&out, b", ")
                    put_json_str(&out, src + s.ol_off[i], s.ol_len[i])
                putb(&out, b'], "transitions": ')
                if not proj and not do_lift:
                    c_dropped += 1
                    putb(&out, b'null, "projective": false, "lifted": 0, "dropped": "non-projective"}\n')
                else:
                    putc(&out, 91)
                    if run_oracle(s, src, &out, True) < 0:
                        raise RuntimeError("oracle stuck on a projective tree (a bug; please report it)")
                    if proj:
                        putb(&out, b'], "projective": true, "lifted": ')
                    else:
                        putb(&out, b'], "projective": false, "lifted": ')
                    put_int(&out, lifted)
                    putb(&out, b"}\n")
                    c_written += 1
            else:
                if not proj and not do_lift:
                    c_dropped += 1
                else:
                    if not proj:
                        lifted = lift_tree(s.oh, s.m)
                    if run_oracle(s, src, &out, False) < 0:
                        raise RuntimeError("oracle stuck on a projective tree (a bug; please report it)")
                    putc(&out, 10)
                    c_written += 1
            if lifted:
                c_lsent += 1
                c_larcs += lifted
            p = q
        result = (
            out.data[:out.len],
            p,
            cur_line,
            status,
            fb_end,
            fb_lines,
            (c_sent, c_written, c_nonproj, c_dropped, c_lsent, c_larcs),
        )
    finally:
        free(out.data)
        free(s)
    return result


cdef bint reaches_root(int* heads, int n, int root, unsigned char* st) nogil:
    cdef int i, j, k
    for i in range(n):
        st[i] = 0
    st[root] = 2
    for i in range(n):
        j = i
        while st[j] == 0:
            st[j] = 1
            j = heads[j]
        if st[j] == 1:
            return False
        j = i
        while st[j] == 1:
            st[j] = 2
            j = heads[j]
    return True


cdef bint build_output(Sent* s, const unsigned char* src, bint surface, bint universal):
    """synprep.syntax.tree.to_tree into s.o*; False on a merge that makes a cycle."""
    cdef int n = s.n, i, j, k, b, r, t, m = 0, steps, x
    cdef int* new_index = s.a1
    cdef int* rep = s.a2
    cdef int* span_end = s.a3
    if not surface or s.nmwt == 0:
        for i in range(n):
            s.oh[i] = s.heads[i]
            s.of_off[i] = s.form_off[i]
            s.of_len[i] = s.form_len[i]
            s.ol_off[i] = s.rel_off[i]
            s.ol_len[i] = s.rel_len[i]
        s.m = n
    else:
        for i in range(n):
            span_end[i] = -1
        for t in range(s.nmwt):
            span_end[s.mwt_a[t]] = t
        i = 0
        while i < n:
            t = span_end[i]
            if t >= 0:
                b = s.mwt_b[t]
                r = i
                for j in range(i, b + 1):
                    if not (i <= s.heads[j] and s.heads[j] <= b):
                        r = j
                        break
                for j in range(i, b + 1):
                    new_index[j] = m
                s.of_off[m] = s.mwt_off[t]
                s.of_len[m] = s.mwt_len[t]
                rep[m] = r
                m += 1
                i = b + 1
            else:
                new_index[i] = m
                s.of_off[m] = s.form_off[i]
                s.of_len[m] = s.form_len[i]
                rep[m] = i
                m += 1
                i += 1
        for k in range(m):
            r = rep[k]
            s.oh[k] = -1 if s.heads[r] < 0 else new_index[s.heads[r]]
            s.ol_off[k] = s.rel_off[r]
            s.ol_len[k] = s.rel_len[r]
        s.m = m
        for k in range(m):
            x = k
            steps = 0
            while x >= 0 and steps <= m:
                x = s.oh[x]
                steps += 1
            if x >= 0 or s.oh[k] == k:
                return False
    if universal:
        for k in range(s.m):
            for j in range(s.ol_len[k]):
                if src[s.ol_off[k] + j] == 58:
                    s.ol_len[k] = j
                    break
    return True
