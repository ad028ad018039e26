"""Top-k straight from a BM25 score matrix in CSC form (bm25s's: per term, its (row, score) postings by row).

`csc_top_k`, compiled by numba where it is installed (`cache=True`: once per machine, not per process), numpy
otherwise, finds each query's k best rows in one of two exact ways:
- MaxScore (dynamic pruning): walk, in row order, only the postings of the "essential" terms, those whose score
  bounds could still lift a row into the top k; look the others up by binary search, and stop as soon as a row's
  bound falls below the k-th best score so far. A first threshold comes from scoring a sample of the postings of
  the most selective term. On Zipfian text a query's frequent words then cost almost nothing.
- exhaustive, where pruning would not pay: add up every posting into a score buffer, then a heap of k.
`csc_row_scores` scores only the given rows (an entity's few snippets) by binary search in each posting list.
All add each row's term scores in float32 in query order, as bm25s does: bm25s's scores bit for bit. Ties go to
the lower row.
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
except ImportError:  # numba is optional (augmenter[eval]): numpy fallback
    njit = None

SAFE = 1.0 + 1e-5  # bounds are float64 sums of float32 scores: widened so float rounding never prunes a hit
SEED = 64  # postings of the most selective term scored first, for a first threshold


def _worse(v, r, pos, vals, rows):
    return v < vals[pos] or (v == vals[pos] and r > rows[pos])


def _offer(v, r, vals, rows, size, k):
    """Offer (v, r) to the heap vals/rows of `size` (at most k) entries, its root the worst kept; new size."""
    if size < k:
        pos = size
        vals[pos], rows[pos] = v, r
        while pos > 0 and _worse(vals[pos], rows[pos], (pos - 1) // 2, vals, rows):
            parent = (pos - 1) // 2
            vals[pos], vals[parent], rows[pos], rows[parent] = vals[parent], vals[pos], rows[parent], rows[pos]
            pos = parent
        return size + 1
    if not (v > vals[0] or (v == vals[0] and r < rows[0])):
        return size
    vals[0], rows[0], pos = v, r, 0
    while 2 * pos + 1 < size:
        child = 2 * pos + 1
        if child + 1 < size and _worse(vals[child + 1], rows[child + 1], child, vals, rows):
            child += 1
        if not _worse(vals[child], rows[child], pos, vals, rows):
            break
        vals[pos], vals[child], rows[pos], rows[child] = vals[child], vals[pos], rows[child], rows[pos]
        pos = child
    return size


def _lower(indices, lo, hi, d):
    """The first position in indices[lo:hi] (sorted) holding a row >= d, galloping from lo (rows come in order,
    so the answer is usually near)."""
    step = 1
    while lo + step < hi and indices[lo + step] < d:
        lo += step
        step *= 2
    hi = min(hi, lo + step + 1)
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _exhaustive(data, indices, indptr, terms, k, mask, buf, vals, rows):
    """Every posting added into `buf` (all zeros on entry and on exit), then the k best into the heap."""
    for t in terms:
        for j in range(indptr[t], indptr[t + 1]):
            buf[indices[j]] += data[j]
    size, postings = 0, 0
    for t in terms:
        postings += indptr[t + 1] - indptr[t]
    if postings >= len(buf):  # a sequential scan of every row
        for r in range(len(buf)):
            v = buf[r]
            if v > 0:
                if (size < k or v > vals[0] or (v == vals[0] and r < rows[0])) and (mask.size == 0 or mask[r]):
                    size = _offer(v, r, vals, rows, size, k)
                buf[r] = 0
        return size
    for t in terms:
        for j in range(indptr[t], indptr[t + 1]):
            r = indices[j]
            v = buf[r]
            if v > 0:  # the row's first visit: offer it, then clear it (a zero is never offered again)
                if (size < k or v > vals[0] or (v == vals[0] and r < rows[0])) and (mask.size == 0 or mask[r]):
                    size = _offer(v, r, vals, rows, size, k)
                buf[r] = 0
    return size


def _maxscore(data, indices, indptr, ub, terms, k, mask, vals, rows, budget):
    """MaxScore into the heap; -1 (nothing done) when the essential postings exceed `budget`."""
    m = len(terms)
    bounds = np.empty(m)
    for i in range(m):
        bounds[i] = ub[terms[i]]
    order = np.argsort(bounds)  # sorted position p holds query term order[p], bounds ascending
    place = np.empty(m, np.int64)  # and query term i sits at sorted position place[i]
    for p in range(m):
        place[order[p]] = p
    upto = np.empty(m)  # upto[p]: the most that terms order[0..p] together can add
    total = 0.0
    for p in range(m):
        total += bounds[order[p]]
        upto[p] = total
    size, top = 0, terms[order[m - 1]]
    cur = indptr[terms].copy()  # per query term, in query order
    for j in range(indptr[top], min(indptr[top + 1], indptr[top] + SEED)):
        d = indices[j]
        if mask.size == 0 or mask[d]:
            s = np.float32(0.0)
            for i in range(m):
                cur[i] = _lower(indices, cur[i], indptr[terms[i] + 1], d)
                if cur[i] < indptr[terms[i] + 1] and indices[cur[i]] == d:
                    s += data[cur[i]]
            size = _offer(s, d, vals, rows, size, k)
    theta = vals[0] if size == k else 0.0  # the final k-th best scores at least this
    essential = 0
    while essential < m and upto[essential] * SAFE < theta:
        essential += 1
    end = np.empty(m, np.int64)
    work = 0
    for p in range(m):
        cur[p], end[p] = indptr[terms[order[p]]], indptr[terms[order[p]] + 1]
        if p >= essential:
            work += end[p] - cur[p]
    if work > budget:
        return -1
    size, part = 0, np.zeros(m, np.float32)
    while True:
        d = -1
        for p in range(essential, m):
            if cur[p] < end[p] and (d < 0 or indices[cur[p]] < d):
                d = indices[cur[p]]
        if d < 0:
            return size
        partial = 0.0
        for p in range(m):
            part[p] = 0
        for p in range(essential, m):
            if cur[p] < end[p] and indices[cur[p]] == d:
                part[p] = data[cur[p]]
                partial += part[p]
                cur[p] += 1
        if mask.size and not mask[d]:
            continue
        alive = True
        for p in range(essential - 1, -1, -1):
            if (partial + upto[p]) * SAFE < theta:
                alive = False
                break
            cur[p] = _lower(indices, cur[p], end[p], d)
            if cur[p] < end[p] and indices[cur[p]] == d:
                part[p] = data[cur[p]]
                partial += part[p]
        if not alive:
            continue
        s = np.float32(0.0)
        for i in range(m):  # query order, as a full score vector adds them
            s += part[place[i]]
        if size < k or s > vals[0] or (s == vals[0] and d < rows[0]):
            size = _offer(s, d, vals, rows, size, k)
        if size == k and vals[0] > theta:
            theta = vals[0]
            while essential < m and upto[essential] * SAFE < theta:
                essential += 1


def _compiled(f):
    try:
        return njit(nogil=True, cache=True)(f)
    except RuntimeError:  # no writable cache directory: compiled in each process instead
        return njit(nogil=True)(f)


if njit is not None:
    _worse, _offer, _lower, _exhaustive, _maxscore = map(_compiled, (_worse, _offer, _lower, _exhaustive, _maxscore))

NUMBA = njit is not None


def column_bounds(data: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each term's highest score (0 for a term without postings): MaxScore's bounds."""
    out = np.zeros(len(indptr) - 1, dtype=np.float64)
    filled = np.diff(indptr) > 0
    if filled.any():
        out[filled] = np.maximum.reduceat(data, indptr[:-1][filled])
    return out


def csc_top_k(
    data,
    indices,
    indptr,
    n: int,
    queries: list[np.ndarray],
    k: int,
    mask: np.ndarray | None = None,
    bounds: np.ndarray | None = None,
    jit: bool = NUMBA,
    prune: float = 0.25,
) -> list[list[tuple]]:
    """The k best (row, score) per query (term ids), best first, among `mask`'s rows if given. Compiled (`jit`,
    where numba is installed): MaxScore while its essential postings are at most `prune` times (all the query's
    postings + n), else exhaustive; `bounds`: `column_bounds`, computed here if not given. numpy otherwise."""
    k = min(k, n)
    if k <= 0:
        return [[] for _ in queries]
    mask = np.zeros(0, dtype=np.bool_) if mask is None else mask
    out = []
    if jit and NUMBA:
        bounds = column_bounds(data, indptr) if bounds is None and prune > 0 else bounds
        buf = None
        vals, rows = np.empty(k, dtype=data.dtype), np.empty(k, dtype=np.int64)
        for terms in queries:
            terms = terms.astype(np.int64)
            size = -1
            if prune > 0 and len(terms):
                budget = prune * (int((indptr[terms + 1] - indptr[terms]).sum()) + n)
                size = _maxscore(data, indices, indptr, bounds, terms, k, mask, vals, rows, float(min(budget, 1e18)))
            if size < 0:
                buf = np.zeros(n, dtype=data.dtype) if buf is None else buf
                size = _exhaustive(data, indices, indptr, terms, k, mask, buf, vals, rows)
            order = np.lexsort((rows[:size], -vals[:size]))
            out.append([(int(rows[i]), float(vals[i])) for i in order])
        return out
    for terms in queries:
        scores = np.zeros(n, dtype=data.dtype)
        for t in terms:
            np.add.at(scores, indices[indptr[t] : indptr[t + 1]], data[indptr[t] : indptr[t + 1]])
        if mask.size:
            scores[~mask] = 0
        out.append(best_rows(np.arange(n), scores, k))
    return out


def csc_row_scores(data, indices, indptr, terms: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The scores of `rows` (sorted, unique) alone, in the same float32 sums as a full score vector."""
    scores = np.zeros(len(rows), dtype=data.dtype)
    for t in terms:
        column = indices[indptr[t] : indptr[t + 1]]
        if len(column) == 0:
            continue
        pos = np.minimum(np.searchsorted(column, rows), len(column) - 1)
        hit = column[pos] == rows
        scores[hit] += data[indptr[t] + pos[hit]]
    return scores


def best_rows(candidates: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k best positive (candidate, score), ties to the lower candidate; `candidates` ascending."""
    if k <= 0:
        return []
    keep = scores > 0
    candidates, scores = candidates[keep], scores[keep]
    if len(candidates) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        above = np.nonzero(scores > kth)[0]
        tied = np.nonzero(scores == kth)[0][: k - len(above)]
        pick = np.concatenate([above, tied])
        candidates, scores = candidates[pick], scores[pick]
    order = np.lexsort((candidates, -scores))
    return [(int(candidates[i]), float(scores[i])) for i in order]
