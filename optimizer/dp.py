"""The dynamic program over layers (Yan et al. 2015, Sec. 5.3), with bipartite-matched mappings.

For one resource triple (N_ps, N_mr, N_wr) the program chooses, layer by layer,
the state s_l = (P_l, R_l, H_l) (partitions, layer replicas, threads) that
minimizes T_epoch itself:

    T_epoch / N_sample = sum_l node_l(s_l) + sum_l edge_l(s_{l-1}, s_l)

* ``node_l(s)``: the layer's computation U_f + U_b + U_w (eqs. 5, 7, 8, 9)
  over its parallelism Q(l) = H R N_mr, plus its share of the weight reads
  M_w (eqs. 10-11 are sums over layers, T_epoch's read term is linear in M_w);
* ``edge_l(s', s)``: the activations layer l receives from layer l-1 (M_f(l),
  eq. 6) and the error terms layer l-1 receives from layer l (M_b(l-1)), under
  the segment-to-worker mapping of layer l found by maximum-weight bipartite
  matching against layer l-1 (:func:`optimizer.matching.map_layer`).

Why it is exact.  Workers are identical, so a transition is priced with layer
l-1 on its canonical workers (segment k of the layer on worker k) and layer l
matched against it; :func:`~optimizer.plans.compose_plan` then relabels each layer's matching
by the permutation that put the previous layer where it is, so every adjacent
pair of the final plan is the priced pair up to a relabeling of workers, and
:meth:`perfmodel.layerwise.LayerWise.evaluate` of that plan returns exactly the
program's value (the layer-wise model takes each component's slowest segment,
which keeps T_epoch a sum over adjacent pairs).  The brute force of
:mod:`optimizer.exhaustive` enumerates every state sequence of the same space
with the same composition (both from :mod:`optimizer.plans`) and the tests
check the two agree.

Two restrictions, both checked: the DNN must be a chain (each layer fed by the
one before, feeding only the one after: AlexNet, VGG, the Adam DNNs of Yan et al.),
and the cache model must be per layer (``LayerWise(working_set="layer")``):
with ``"worker"`` a layer's C_muladd depends on every other layer's partitions
and T_epoch no longer splits into pairs (the program then optimizes with the
per-layer working set and says ``exact=False``; the plan is re-evaluated with
the model as given).

Speed without losing exactness
------------------------------
Nothing below changes what is computed: each item is the value of the
mapping :func:`~optimizer.matching.map_layer` returns, each step the same
minimum, and every pruning rule drops only what provably cannot be (or
cannot beat) the optimum.  ``tests/test_dp.py`` checks each piece against
the plain computation, and the program against brute force.

*Threads folded in.*  With C_nbw(H) = C_nbw / H and Q = H R N_mr, a
transfer over Q is ``[x > 0] (g(H) + x C_bits / C_nbw) / (R N_mr)`` with
g(H) = C_ncost(H) / H: H enters the transition only through g(H), and only
when the items x are non-zero.  So the minimum over the previous thread
count takes one of two values per previous (P', R') (``min_H' best`` when
E = 0, ``min_H' best + g(H') / (R' N_mr)`` when E > 0), and the arrival
side one of two per current (P, R) (over the predecessors with A = 0, or
A > 0, then + g(H) / (R N_mr)).  A layer costs O(#(P,R)^2 + #(P,R) K), not
O(#(P,R)^2 K^2), and is vectorized.

*Pricing a transition* (:meth:`Pricer.items`, cached per (l, P', R', P, R):
the same for every N_wr >= max(P' R', P R) and every triple):

1. Dense consumer (fc, softmax, ...; :func:`perfmodel.partition.is_dense_pair`),
   R' = R = 1: closed form, every (P', P) at once (:meth:`Pricer._dense_items`).
   The affinity of segment j for the worker of segment i is s_i + t_j when
   both are non-empty, else 0, so an assignment is worth the s and t of its
   non-empty pairs, at most the m = min(n_i, n_j) largest of each; every
   optimal assignment (whatever its tie-break) pairs largest-m multisets,
   and the maxima A = S - s_partner and E = T - t_partner depend only on
   those multisets.
1b. Dense consumer with replicas (R' or R > 1): the lexicographically
   smallest optimal mapping by counting (:func:`_dense_workers`).  Worker k
   < P' R' holds segment i = k mod P' of block b = k // P' (size s_k, the
   others are idle, size 0); column c is segment p = c mod P of replica rho
   = c // P (size t_c).  The affinity ``[b = rho mod R'] [t_c > 0] s_k +
   [rho = b mod R] [s_k > 0] t_c`` is positive only inside a *component*:
   with R >= R', block b and the replicas rho = b mod R' (every error pair
   is an activation pair); with R < R', replica rho and the blocks b = rho
   mod R (every activation pair is an error pair).  Inside a component, a
   pair of non-empty segments is worth x_k + y_c, with x_k = s_k and y_c =
   [rho < R'] t_c (R >= R'), or x_k = [b < R] s_k and y_c = t_c (R < R'),
   and every other pair 0; either all x or all y of non-empty segments are
   > 0.  So an assignment is worth, per component, the x of its paired
   rows plus the y of its paired columns, at most the m = min(#non-empty
   rows, #non-empty columns) largest of each, and it is optimal exactly
   when, in every component, it makes m non-empty pairs whose rows and
   columns are largest-m multisets (fewer pairs lose a positive term): the
   rows above the m-th largest x must pair (*must*), those equal to it
   pair in a given number (*may*, a quota), those below must not; columns
   alike.  The lexicographically smallest optimal assignment takes, for
   each column in order, the lowest free worker from which the assignment
   can still be completed optimally.  A choice can be completed iff it
   keeps every quota fillable: a pair uses a must or a may row (quota
   left) with a must or a may column (quota left) of the same component;
   any other placement (the column stays unpaired) needs a column that may
   stay unpaired (free, below its threshold, or may with more left than
   its quota) on a row that may stay unpaired (free, below its threshold in
   its component, or may with more left than its quota), and not a
   non-empty row of the column's own component (that would pair them).
   The rest can then always be completed: each component's remaining
   must and quota rows and columns are equally many and any of them may
   pair; the unpaired columns are no more than the unpaired rows (workers
   >= segments), and a component never has both an unpaired non-empty row
   and an unpaired non-empty column (one side has exactly m).  Within a
   class (component, kind) the rows are interchangeable for feasibility, so
   the lowest free worker allowed is the least of each allowed class's
   lowest free row.  This is the mapping of
   :func:`~optimizer.matching.match_segments` (same optimal set, same
   order; the tests compare the two), in O(P R (R + R')) without the
   assignment solver.  The items follow from the segment sizes alone (the
   transfer matrices of a dense pair are s_i [t_p > 0] and [s_i > 0] t_p),
   so these transitions are priced exactly, empty segments included (they
   take no lower end of a range, rule 5).
2. Otherwise the affinity matrix is built as ``layer_affinity`` builds it.
   If an assignment puts every segment on a worker of its column maximum
   (:func:`_greedy`), the optimal assignments are exactly those, and the
   lexicographically smallest is built segment by segment with a look-ahead
   by augmenting paths: the same mapping as
   :func:`~optimizer.matching.match_segments` (same optimal set, same
   order), without the assignment solver.  Else ``match_segments`` itself.
3. The items follow from the mapping as the layer-wise model counts the
   remote activations and error terms of M_f and M_b (``_items_of``).
4. A transition with empty segments (P' or P above the rows of its layer)
   whose compressed problem is tie-free takes that problem's items, with no
   matching at all (see "Empty segments" below).

Items are kept in numpy tables per (l, R', R) (exact items of transitions
without empty segments, ranges of compressed problems, exact items of the
others), so a layer's transitions are gathered by fancy indexing and only
the missing ones are priced.

Compute per (l, P) does not depend on R or on the triple
(:meth:`Pricer.compute_table`, vectorized over all P with the arithmetic of
``layer_costs``); both caches are shared by all triples of a search.

*Pruning rules* (each keeps the optimum; all comparisons carry a relative
slack of 1e-9 so that rounding can never drop a tie):

1. Servers (:func:`useful_triples`): T_epoch depends on N_ps only through
   min(N_ps, N_wr) in eq. 11, where more servers never read slower, so per
   (N_mr, N_wr) only the most useful N_ps is solved (and N_ps = 0 when
   N_mr = 1, the one case where no server is needed).
2. Triples (:func:`optimize`): transitions cost >= 0, so T_epoch of any plan
   of a triple is >= N_sample sum_l min_s node_l(s) (:func:`triple_bounds`,
   computed for all P <= N_wr // R through a prefix minimum over P; rule 11
   adds to each node the least transfer time charged to its state).
   Triples are taken in increasing order of a key, at first this bound
   (rule 7 raises it); the incumbent is the top-th smallest optimum found
   so far.  Once a triple's key exceeds the incumbent, it and every later
   one have optimum > the top-th best and cannot enter the ranking (ties
   included), so the search stops.  A triple that passes is first run with
   every transition at rule 4's lower bounds on its items (nothing
   matched): that value is a lower bound too, and above the bound of the
   run it rules the triple out.
2b. Ordering triples without every bound (:class:`_TripleOrder`): rule 2
   needs the triples in increasing order of their bounds, not every
   bound.  :func:`quick_triple_bounds` gives, for all triples at once, a
   lower bound on each bound (per layer and range of R in [2^j, 2^(j+1)),
   the least compute term over its R and every H, with each state's least
   transfer charge over H (rule 11), plus the least read term
   at R = 2^j, the least over the ranges: the read term grows with R,
   since every copy of a replicated layer is read and M_w = M_w^min +
   ``mw_position`` (M_w^max - M_w^min) with both terms >= 0 and linear in
   the bytes read; the minimum of a sum is at least the sum of the
   minima).  A heap keyed by it yields a triple only once its own bound is
   computed and no other key is smaller, so triples come out in the same
   order as sorting all bounds (ties: more workers first, then the order
   of the space), and rule 2 stops the search before most bounds are ever
   computed.  Within :func:`triple_bounds`, R is tried in growing chunks
   and stops once the read term alone at the next R exceeds every layer's
   least node cost so far (no larger R can do better, same monotonicity),
   which gives the minimum over every R to the bit.
3. States (:func:`solve` with ``bound``): any plan through state s of layer
   l costs at least (cost of the best path into layer l-1's states, or the
   sum of the node minima before l) + node_l(s) + the sum of the node minima
   after l, each node with its transfer charge (rule 11: the charges of s
   and of the other layers are disjoint parts of the transitions, and the
   best path into l-1 holds none of the parts charged to l or after).
   States above the bound are neither priced nor kept.  If the
   triple's optimum is <= the bound, every state on its optimal path passes,
   so the program returns it exactly; otherwise it returns None (the triple
   is not in the top) and no plan is claimed.
4. Transitions (:func:`_step`, :meth:`Pricer.item_bounds`): before pricing
   (P', R') -> (P, R), lower bounds on its items, from counts alone: a
   segment shares a worker with at most one segment of the other layer, so
   A(l, p) >= in(p) - max_i act[i, p] and E >= errin(i) - max_p err[i, p];
   with R' = R = 1 at most n_j of the n_i non-empty segments of l-1 find a
   non-empty partner, so E >= the (n_i - n_j)-th smallest errin (and A
   alike); and the largest item is at least the mean one: the activations
   spared over all R P segments are at most R times the sum of act's
   column maxima and, one segment per worker, min(R, R') times the sum of
   its row maxima (only blocks paired with a replica spare anything), so max_p A
   >= (R sum(act) - that) / (R P), and E alike (:func:`_mean_bounds`); for
   dense layers these come from the segment sizes.  Costs
   grow with the items, so (best path into P', plus the transition priced at
   the bounds, plus the cheapest node of (P, R), plus the node minima after l)
   is a lower bound on every plan using the transition; one above the bound
   is left unpriced (+inf).  The optimal path's transitions are all priced
   whenever the optimum is <= the bound (its own cost bounds them), so rule 3's
   argument carries over.
5. Lazy transitions (:func:`solve`): a transition with empty segments whose
   compressed problem is not tie-free (next section) first costs the lower
   end of its range; when the program's best path uses such a transition,
   it is priced exactly and the program runs again.  The final best path is
   priced exactly throughout and no other path, priced at or below its true
   cost, is cheaper, so it is optimal.
6. One replica without servers (:func:`optimize`): the triples (0, 1, N_wr)
   have no weight reads and the same node and transition costs for every
   N_wr (items do not depend on idle workers), on state spaces that grow
   with N_wr, so their optimum does not increase with N_wr.  Once (0, 1, w)
   is ruled out by the bound, every (0, 1, w') with w' < w is too; and once
   (0, 1, w) is solved, every (0, 1, w') with w >= w' >= the most workers its
   optimal plan uses has the same optimum (that plan is in its space, and
   nothing in its space beats it).  Triples with equal bounds are solved
   largest N_wr first so that this settles the smaller ones.
7. Trial bounds (:func:`_search_pruned`): rules 3-4 prune more the
   closer the bound of a run is to the triple's optimum, so a triple is
   first run with every transition at its lower bounds
   (:func:`relaxed_value`, a lower bound on its optimum; bound 10 % above
   its key) and then exactly with a trial bound just above its key (0.2 %
   above it, doubled with each failed trial, or the next triple's key if
   larger; never above the incumbent) rather than with the incumbent.  A
   run within a bound is exact whenever the optimum is below it (rule 3);
   when it finds nothing, the optimum exceeds the trial bound; either way
   the triple's key becomes the largest lower bound known (a valid key)
   and the triple goes back into the order.  Triples found are thus exact,
   and a triple never found has a key, hence an optimum, above the
   incumbent, as rule 2 needs.  With rules 6 and 9, a lower bound found
   this way raises the keys of the triples the triple dominates.
8. Lazy minima (:func:`_lazy_items`): a state's value is a minimum over its
   predecessors, so a transition needs its items only if its lower bound
   (rule 4, costs growing with the items) could reach that minimum.  Per
   state, the predecessor of least lower bound is priced, in rounds, until
   the best priced one is below every unpriced lower bound, or equal to it
   with a smaller index (the first-index tie-break of ``argmin``), for no
   arriving activations and for some; the unpriced keep their lower
   bounds.  The minima, their arguments, hence values and plans, are those
   of pricing every transition.
9. Dominance (:class:`_Dominance`): for triples with servers, T_epoch depends
   on the triple only through N_mr, the read lanes min(N_ps, N_wr) (eq. 11,
   where more lanes never read slower, as in rule 1) and the state space,
   which grows with N_wr (transitions do not depend on idle workers, rule
   6).  So a triple with the same N_mr and at least the workers and lanes
   of another has an optimum no larger: every plan of the other is one of
   its plans and costs no more.  Each lower bound learnt on a triple's
   optimum (its relaxed value, a failed trial, its optimum) is thus one on
   every triple it dominates, whose key is raised to it before it is run;
   the serverless triples (0, 1, N_wr) dominate alike by N_wr (rule 6).
10. Relaxed runs (:func:`_relaxed_step`): the run at the lower bounds needs
   only values, not arguments.  A state's value through a predecessor is at
   least that predecessor's best b0 plus the state's node cost, so the
   predecessors are taken in chunks of increasing b0, each only for the
   states whose value (for some thread count, through either arrival case)
   it could still lower, and that it could keep within the bound; a value
   thereby left too high was above the bound anyway and is dropped by rule
   3 at the next layer, or in the last layer exceeds the bound as the true
   one does.  So the relaxed value, or the None above the bound, is that of
   the plain pass, to the bit.
11. Transfer charges (:meth:`Pricer.transfer_floors`, :func:`_charges`): T_epoch is
   the sum over layers of node_l(s_l), plus, per transition (s_{l-1}, s_l),
   an error part ``[E > 0] (g(H') + E C_bits / C_nbw) / (R' N_mr)``, which
   depends on s_{l-1} = (P', R', H') and the items, and an activation part
   ``[A > 0] (g(H) + A C_bits / C_nbw) / (R N_mr)``, which depends on s_l =
   (P, R, H) and the items ("Threads folded in").  Charge each error part to
   its source state and each activation part to its target: T_epoch /
   N_sample = sum_l c_l(s_l) with c_l(s) = node_l(s) + the activation part
   into s + the error part out of s.  Both parts grow with their item, so
   each is at least its value at the least item over every state of the
   other layer and every replica count: a[P] = min over P' (up to the
   cluster's machines: no triple has more workers) of rule 4's
   bound on max A with the replica terms at their least (the mean bound
   (R sum(act) - min(min(R, R') row maxima, R column maxima)) / (R P) is
   smallest when min(R, R') = R, i.e. (sum - min(row maxima, column
   maxima)) / P; the counting bound, R' = R = 1 only, dropped), and e[P']
   alike over P; for a dense consumer both terms of each bound shrink as
   the other layer's largest segment grows, so the least is at one segment
   (P' = 1, resp. P = 1), in closed form.  (On clusters of fewer than
   ``_FLOOR_MACHINES`` machines the floors of transitions into a layer that
   is not dense are taken as 0, also a floor: speed only.)  So c_l(s) >= node_l(s) +
   charge_l(s), the charge taking a and e in place of the items (the first
   layer receives no activation, the last sends no error terms), and for
   every plan T_epoch / N_sample >= sum_l min_s (node_l(s) + charge_l(s)):
   the minimum of a sum is at least the sum of the minima.  This replaces
   the node minima everywhere they bound a cost: rule 2's key
   (:func:`triple_bounds`, per H the least over P <= N_wr // R of compute
   C_interf(H) / H + charge times R N_mr, a prefix minimum over P shared by
   all triples; :func:`quick_triple_bounds` takes each charge at its least
   H), and rule 3's cost-to-go and state bounds (a state's charged cost; the
   layers after l at their charged minima, which hold no part of the
   transitions into l or before).  In rule 4 the cheapest node of (P, R)
   takes the error part the state will send back at its floor: that part
   belongs to the transition out of l, which the cost-to-go after l does not
   count.  All of these remain lower bounds on what they bound, so rules 2-4
   and 7-10 keep their arguments unchanged.  The charges bring a triple's key
   within about 1 % of its optimum on Yan et al.'s DNN (the node minima were
   5-10 % below), where most transitions move activations across workers.

Empty segments.  A layer cut into more stripes than it has rows (or
neurons) has single-row stripes and empty ones.  Its own costs are those of
P = rows, and in a transition the non-empty segments form the same core
problem as with P' = min(P', rows'), P = min(P, rows): the affinity matrix
gains zero rows and columns only.  Every optimal assignment of the
expanded problem has the items of some optimal assignment of the
compressed one (its positive pairs form a maximum core matching; placing
the other segments anywhere adds no saving, since a free row and a free
column with positive affinity would improve that matching).  So when all
optimal assignments of the compressed problem give the same items
(:func:`_item_range` finds the assignments' edges from the duals and the
strongly connected components of the tight graph, brackets each segment's
saving, and checks the brackets of max A and max E close), every expanded
transition has those items, whatever the lexicographic tie-break does with
the empty segments; otherwise the range still bounds them (rule 5).  States
with empty segments are therefore kept, and priced mostly for free.

References
----------
Yan, Ruwase, He, Chilimbi 2015, "Performance Modeling and Scalability
Optimization of Distributed Deep Learning Systems" (KDD): Sec. 5.1
and Fig. 7 (the space), Sec. 5.3 (the dynamic program, bipartite matching).
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from perfmodel import layerwise as lw
from perfmodel import partition as pt
from perfmodel.errors import SpecError
from perfmodel.result import Estimate
from perfmodel.specs import DNN, Cluster, Config

from .exhaustive import best_plan
from .matching import match_segments
from .plans import canonical_plan, check_chain, compose_plan, state_space
from .results import Candidate, DPResult, SearchResult
from .space import layer_choices, model_parallelism_limit

__all__ = ["DPResult", "Pricer", "check_chain", "compose_plan", "solve", "canonical_plan",
           "estimate_plan", "useful_triples", "triple_bounds", "quick_triple_bounds", "relaxed_value",
           "optimize"]


@dataclass
class Pricer:
    """Per-layer and per-transition costs of one DNN on one cluster, cached across configurations.

    Its caches hold the costs that do not depend on the configuration (per
    sample, single thread): compute per (layer, P) (R does not change a
    segment's compute, see :meth:`compute`) and remote items per
    (layer, P', R', P, R), shared by every N_wr >= max(P' R', P R).
    """

    model: lw.LayerWise
    dnn: DNN
    cluster: Cluster
    _compute: dict = field(default_factory=dict)
    _items: dict = field(default_factory=dict)
    stats: dict = field(default_factory=lambda: {"closed_form": 0, "compressed": 0, "dense": 0,
                                                 "greedy": 0, "matched": 0})

    def __post_init__(self):
        check_chain(self.dnn)
        self.model.check_hardware(self.cluster)
        # the per-layer model of the cache makes a layer's cost its own business
        self.layer_model = dataclasses.replace(self.model, working_set="layer")
        self.exact = self.model.working_set == "layer"
        self._tables: dict = {}
        self._workers: dict = {}
        self._lower: dict = {}
        self._floors: dict = {}
        self._charges: dict = {}
        self._prefix: dict = {}
        self._ranges: dict = {}
        self._item_tables: dict = {}
        self._sorted: dict = {}
        self._stats_of: dict = {}
        self._programs: dict = {}
        self._units = [pt.stripe_units(layer) for layer in self.dnn.layers]
        self._dense = [False] + [pt.is_dense_pair(self.dnn.layers[l - 1], self.dnn.layers[l])
                                 for l in range(1, len(self.dnn.layers))]

    def _plan_with(self, **placed) -> lw.Plan:
        layers = [canonical_plan(1, 1)] * len(self.dnn.layers)
        for index, plan in placed.items():
            layers[int(index)] = plan
        return lw.Plan(tuple(layers))

    def grown(self, need: int, have: int) -> int:
        """The size to which a table of ``have`` entries grows to hold ``need``: doubled,
        but not beyond the cluster's machines (no configuration has more workers)
        unless ``need`` is larger (speed only)."""
        return max(need, min(2 * have, self.cluster.machines))

    def compute(self, l: int, p: int, r: int = 1) -> float:
        """U_f + U_b + U_w of layer ``l``'s slowest segments with one thread (eqs. 5, 7, 8).

        Independent of ``r``: each segment sits on its own worker (C3), so the
        per-layer working set, hence C_muladd, is one segment's, whatever R.
        """
        key = (l, p)
        if key not in self._compute:
            plan = self._plan_with(**{str(l): canonical_plan(p, 1)})
            ws = self.layer_model.layer_working_set(self.dnn, l, plan, self.cluster)
            c = self.layer_model.layer_muladd_time(self.dnn, l, plan, self.cluster, ws)
            costs = lw.layer_costs(self.dnn, l, plan, self.cluster, 1, c_muladd=c)
            self._compute[key] = costs.U_f + costs.U_b + costs.U_w
        return self._compute[key]

    def compute_table(self, l: int, p_max: int) -> np.ndarray:
        """``[compute(l, P) for P in 0..p_max]`` (entry 0 unused, +inf), all P at once."""
        have = self._tables.get(l)
        if have is None or len(have) <= p_max:
            have = np.concatenate([[np.inf], self._compute_many(l, self.grown(
                p_max, len(have) if have is not None else 0))])
            self._tables[l] = have
        return have[:p_max + 1]

    def _compute_many(self, l: int, p_max: int) -> np.ndarray:
        """:meth:`compute` for P = 1..p_max, vectorized over every stripe of every P, with the
        arithmetic of :func:`perfmodel.layerwise.layer_costs` (tests check equality)."""
        dnn, cluster, model = self.dnn, self.cluster, self.layer_model
        layer = dnn.layers[l]
        units = pt.stripe_units(layer)
        ps = np.arange(1, p_max + 1, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(ps + 1)])[:-1]         # edge k of P at starts + k
        p_of = np.repeat(ps, ps + 1)
        k = np.arange(len(p_of)) - np.repeat(starts, ps + 1)
        edges = k * units // p_of
        last = np.concatenate([starts[1:], [len(p_of)]]) - 1          # index of edge P
        seg = np.ones(len(p_of), dtype=bool)
        seg[last] = False                                             # segment k: edges k, k+1
        first = starts - np.arange(p_max)                             # segment start offsets

        def split(total):
            cum = int(total) * edges // units
            return (cum[1:] - cum[:-1])[seg[:-1]]

        weights_in, neurons = split(layer.connections), split(layer.neurons)
        share = neurons / max(layer.neurons, 1)
        weights_out = lw.next_layer_connections(dnn, l) * share
        if pt.is_spatial(layer.out_shape):
            params = np.maximum.reduceat(np.where(neurons > 0, int(layer.weights), 0), first)
        else:
            params = np.maximum.reduceat(split(layer.weights), first)
        ws = params * cluster.weight_bytes
        streaming = layer.weights > 0 and layer.connections / layer.weights < model.reuse_threshold
        c_in, c_mem, cache = cluster.c_muladd, cluster.c_muladd_mem, cluster.cache_bytes
        if not streaming or c_mem is None or cache is None:
            c = np.full(p_max, float(c_in))
        elif model.cache_model == "step":
            c = np.where(ws <= cache, c_in, c_mem)
        else:
            fits = cache / np.where(ws <= cache, cache, ws)
            c = np.where(ws <= cache, c_in, fits * c_in + (1.0 - fits) * c_mem)
        c_seg = np.repeat(c, ps)
        c_interf = float(lw.interference_factor(1, cluster.interference))
        u_f = c_interf * (c_seg * weights_in + (cluster.c_act or 0.0) * neurons)
        u_b = c_interf * (c_seg * weights_out + (cluster.c_err or 0.0) * neurons)
        u_w = c_interf * (c_seg * weights_in)
        return (np.maximum.reduceat(u_f, first) + np.maximum.reduceat(u_b, first)
                + np.maximum.reduceat(u_w, first))

    def items(self, l: int, prev: tuple, cur: tuple) -> tuple[float, float]:
        """(max A(l, p), max E(l-1, p)) with layer l matched against a canonical layer l-1.

        The items of the mapping :func:`optimizer.matching.map_layer` returns
        (maximum-weight matching, lexicographic tie-break), computed the
        fastest provably equal way (module docstring, "Pricing a
        transition").  The matching only needs the workers either layer uses:
        with the lexicographic tie-break extra (idle) workers are never chosen,
        so the answer holds for every N_wr >= max(P' R', P R) and is cached once.
        """
        key = (l, tuple(map(int, prev)), tuple(map(int, cur)))
        if key not in self._items:
            got = self._items[key] = self._price(l, *key[1], *key[2])
            (p1, r1), (p, r) = key[1], key[2]
            if p1 > self._units[l - 1] or p > self._units[l]:
                self._table(l, r1, r, p1 + 1, p + 1, "expanded", 2)[:, p1, p] = got
        return self._items[key]

    def item_matrix(self, l: int, prev_pairs: np.ndarray, cur_pairs: np.ndarray, mask=None,
                    lazy: bool = False):
        """(A, E), each (len(prev_pairs), len(cur_pairs)): :meth:`items` of every transition
        (of those where ``mask`` is True; +inf elsewhere).  With ``lazy``, a transition with
        empty segments whose items are not known yet gets the lower end of their range
        (:meth:`lazy` tells which; rule 5).

        Vectorized over tables per (l, R', R): the items of transitions without empty
        segments, the ranges of their compressed problems, and the items of transitions
        with empty segments priced one by one; only what is missing is priced.
        """
        n_i, n_j = len(prev_pairs), len(cur_pairs)
        need_all = np.ones((n_i, n_j), dtype=bool) if mask is None else mask
        u1, u = self._units[l - 1], self._units[l]
        r1s, rs = np.unique(prev_pairs[:, 1]), np.unique(cur_pairs[:, 1])
        if len(r1s) == 1 and len(rs) == 1:  # one block: no scatter
            return self._block_items(l, int(r1s[0]), int(rs[0]), prev_pairs[:, 0],
                                     cur_pairs[:, 0], need_all, lazy, u1, u)
        a = np.full((n_i, n_j), np.inf)
        e = np.full((n_i, n_j), np.inf)
        for r1 in r1s:
            ii = np.flatnonzero(prev_pairs[:, 1] == r1)
            for r in rs:
                jj = np.flatnonzero(cur_pairs[:, 1] == r)
                need = need_all[np.ix_(ii, jj)]
                if not need.any():
                    continue
                got_a, got_e = self._block_items(l, int(r1), int(r), prev_pairs[ii, 0],
                                                 cur_pairs[jj, 0], need, lazy, u1, u)
                a[np.ix_(ii, jj)] = got_a
                e[np.ix_(ii, jj)] = got_e
        return a, e

    def pair_items(self, l: int, prev_pairs: np.ndarray, cur_pairs: np.ndarray):
        """(A, E) of the transitions prev_pairs[k] -> cur_pairs[k], one by one: what
        :meth:`item_matrix` (``lazy=True``) gives each of them, through the same caches."""
        out = np.empty((2, len(prev_pairs)))
        u1, u = self._units[l - 1], self._units[l]
        for k, ((p1, r1), (p, r)) in enumerate(zip(prev_pairs.tolist(), cur_pairs.tolist())):
            key = (l, (p1, r1), (p, r))
            got = self._items.get(key)
            if got is None and (p1 > u1 or p > u) and not self._dense[l]:
                span = self._range(l, p1, r1, p, r)   # empty segments: the compressed problem
                if span is None:
                    span = (0.0, 0.0, np.inf, np.inf)
                got = span[:2]                        # exact when closed, else the lower end
                if span[:2] == span[2:]:
                    self.stats["compressed"] += 1
            out[:, k] = self.items(l, (p1, r1), (p, r)) if got is None else got
        return out[0], out[1]

    def _table(self, l: int, r1: int, r: int, rows: int, cols: int, kind: str, depth: int):
        """A NaN-initialized table (depth, >= rows, >= cols) per (kind, l, R', R), grown on
        demand."""
        key = (kind, l, r1, r)
        tab = self._item_tables.get(key)
        if tab is None or tab.shape[1] < rows or tab.shape[2] < cols:
            shape = (depth, max(rows, 0 if tab is None else tab.shape[1]),
                     max(cols, 0 if tab is None else tab.shape[2]))
            grown = np.full(shape, np.nan)
            if tab is not None:
                grown[:, :tab.shape[1], :tab.shape[2]] = tab
            tab = self._item_tables[key] = grown
        return tab

    def _block_items(self, l, r1, r, p1, p, need, lazy, u1, u):
        """Items of transitions (P'_i, r1) -> (P_j, r) where ``need``; +inf elsewhere."""
        if self._dense[l] and r1 == r == 1:  # closed form, any P', P (cached)
            tab = self._table(l, 1, 1, int(p1.max()) + 1, int(p.max()) + 1, "dense", 2)
            up1, up = np.unique(p1), np.unique(p)
            if np.isnan(tab[0][np.ix_(up1, up)]).any():
                tab[:, up1[:, None], up[None, :]] = self._dense_items(l, up1, up)
            self.stats["closed_form"] += int(need.sum())
            vals = tab[:, p1[:, None], p[None, :]]
            return np.where(need, vals[0], np.inf), np.where(need, vals[1], np.inf)
        # every transition through its compressed problem (P' <= rows', P <= rows): a grid;
        # a dense consumer's transitions are priced exactly, empty segments or not (1b)
        if self._dense[l]:
            u1, u = max(u1, int(p1.max())), max(u, int(p.max()))
        c1, c = np.minimum(p1, u1), np.minimum(p, u)
        g1, i1 = np.unique(c1, return_inverse=True)
        g, j = np.unique(c, return_inverse=True)
        exp1, exp = p1 > u1, p > u
        expanded = exp1[:, None] | exp[None, :]
        core_cells = _reduce_any(_reduce_any(need & ~expanded, i1, len(g1)).T, j, len(g)).T
        spread_cells = _reduce_any(_reduce_any(need & expanded, i1, len(g1)).T, j, len(g)).T
        grid = np.full((2, len(g1), len(g)), np.inf)
        if core_cells.any():  # exact items of the compressed problems themselves
            tab = self._table(l, r1, r, int(g1.max()) + 1, int(g.max()) + 1, "items", 2)
            for x, y in np.argwhere(core_cells & np.isnan(tab[0][np.ix_(g1, g)])):
                tab[:, g1[x], g[y]] = self.items(l, (int(g1[x]), r1), (int(g[y]), r))
            grid = np.where(core_cells, tab[:, g1[:, None], g[None, :]], grid)
        core = need & ~expanded
        out_a = np.where(core, grid[0][i1[:, None], j[None, :]], np.inf)
        out_e = np.where(core, grid[1][i1[:, None], j[None, :]], np.inf)
        if spread_cells.any():  # empty segments: the range of the compressed problem
            rng = self._table(l, r1, r, int(g1.max()) + 1, int(g.max()) + 1, "ranges", 4)
            for x, y in np.argwhere(spread_cells & np.isnan(rng[0][np.ix_(g1, g)])):
                got = self._range(l, int(g1[x]) + int(g1[x] == u1), r1,
                                  int(g[y]) + int(g[y] == u), r)
                rng[:, g1[x], g[y]] = (0.0, 0.0, np.inf, np.inf) if got is None else got
            span = rng[:, g1[:, None], g[None, :]]
            closed = (span[0] == span[2]) & (span[1] == span[3])
            self.stats["compressed"] += int((spread_cells & closed).sum())
            spread = need & expanded
            out_a = np.where(spread, span[0][i1[:, None], j[None, :]], out_a)
            out_e = np.where(spread, span[1][i1[:, None], j[None, :]], out_e)
            open_ = spread & ~closed[i1[:, None], j[None, :]]
            if open_.any():  # lower ends (rule 5), unless priced one by one already
                ex = self._table(l, r1, r, int(p1.max()) + 1, int(p.max()) + 1, "expanded", 2)
                if not lazy:
                    for x, y in np.argwhere(open_ & np.isnan(ex[0][p1[:, None], p[None, :]])):
                        ex[:, p1[x], p[y]] = self.items(l, (int(p1[x]), r1), (int(p[y]), r))
                known = ex[:, p1[:, None], p[None, :]]
                use = open_ & ~np.isnan(known[0])
                out_a = np.where(use, known[0], out_a)
                out_e = np.where(use, known[1], out_e)
        return out_a, out_e

    def item_bounds(self, l: int, prev_pairs: np.ndarray, cur_pairs: np.ndarray):
        """Lower bounds on :meth:`items` of every transition, without matching (rule 4).

        A segment sits with at most one segment of the other layer, so
        A(l, p) >= in(p) - max_i act[i, p] and E(l-1, i) >= errin(i) -
        max_p err[i, p] in every replica, hence on their averages and maxima.
        With R' = R = 1, at most n_j of the n_i non-empty segments of layer l-1
        share a worker with a non-empty segment of layer l, so when n_i > n_j
        some n_i - n_j of them receive all their error terms: E >= the
        (n_i - n_j)-th smallest errin; likewise A with the roles swapped.
        And the largest item is at least the mean one, whose savings are
        capped by the workers as well as by the segments (:func:`_mean_bounds`).
        """
        p1, p = prev_pairs[:, 0], cur_pairs[:, 0]
        r1, r = prev_pairs[:, 1][:, None], cur_pairs[:, 1][None, :]
        single = (r1 == 1) & (r == 1)
        if self._dense[l]:  # act[i, p] = s_i [t_p > 0], err[i, p] = [s_i > 0] t_p
            (s_max, n_i), (t_max, n_j) = self._size_stats(l - 1, p1), self._size_stats(l, p)
            s_tot = float(self.dnn.layers[l - 1].neurons)
            t_tot = float(self.dnn.layers[l].neurons)
            bp_a = np.broadcast_to(s_tot - s_max[:, None], single.shape)
            bp_e = np.broadcast_to(t_tot - t_max[None, :], single.shape)
            more_j = n_j[None, :] > n_i[:, None]
            more_i = n_i[:, None] > n_j[None, :]
            ni, nj = n_i[:, None].astype(float), n_j[None, :].astype(float)
            mean_a, mean_e = _mean_bounds(
                (s_tot * nj, s_tot, nj * s_max[:, None]),
                (ni * t_tot, ni * t_max[None, :], t_tot), p1[:, None], r1, p[None, :], r)
            return (np.maximum(np.where(single & more_j, s_tot, bp_a), mean_a),
                    np.maximum(np.where(single & more_i, t_tot, bp_e), mean_e))
        # empty segments change none of these bounds: price them on the compressed counts
        p1 = np.minimum(p1, self._units[l - 1])
        p = np.minimum(p, self._units[l])
        size = int(max(p1.max(), p.max())) + 1
        tab = self._lower.get(l)
        if tab is None or tab.shape[1] < size:
            grown = np.full((10, size, size), np.nan)
            if tab is not None:
                grown[:, :tab.shape[1], :tab.shape[2]] = tab
            tab = self._lower[l] = grown
        u1, i1 = np.unique(p1, return_inverse=True)
        u, j = np.unique(p, return_inverse=True)
        for x, y in np.argwhere(np.isnan(tab[0][np.ix_(u1, u)])):
            tab[:, u1[x], u[y]] = self._bounds(l, int(u1[x]), int(u[y]))
        grid = tab[:, u1[:, None], u[None, :]][:, i1[:, None], j[None, :]]  # compressed counts
        low_a = np.where(single, np.maximum(grid[0], grid[2]), grid[0])
        low_e = np.where(single, np.maximum(grid[1], grid[3]), grid[1])
        mean_a, mean_e = _mean_bounds(grid[4:7], grid[7:10], p1[:, None], r1, p[None, :], r)
        return np.maximum(low_a, mean_a), np.maximum(low_e, mean_e)

    def transfer_floors(self, l: int, p_max: int):
        """(a, e), each of length ``p_max + 1`` (entry 0 unused): a[P] <= the item max A of
        every transition into layer ``l`` cut in P (whatever the predecessor and the
        replicas), e[P'] <= the item max E of every transition out of layer l-1 cut in P'
        into layer ``l`` (rule 11).

        The least :meth:`item_bounds` over the other layer's states (P up to the
        cluster's machines, or ``p_max`` if larger), with the replica
        terms at their least: the mean bound of :func:`_mean_bounds` is smallest when
        min(R, R') is largest, i.e. (sum - min(row maxima, column maxima)) / P, and the
        counting bound (R' = R = 1 only) is dropped.  For a dense consumer both terms
        shrink as the other layer's largest segment grows, so the least is at one
        segment (P' = 1, resp. P = 1).  Cached per layer.
        """
        got = self._floors.get(l)
        if got is not None and len(got[0]) > p_max:
            return got[0][:p_max + 1], got[1][:p_max + 1]
        size = self.grown(p_max, len(got[0]) - 1 if got is not None else 0)
        ps = np.arange(1, size + 1)
        # the other layer's P up to the cluster's machines (or any P asked for): no
        # configuration has more workers
        span = max(self.cluster.machines, size)
        u1, u = min(self._units[l - 1], span), min(self._units[l], span)
        if self._dense[l]:
            s_tot = float(self.dnn.layers[l - 1].neurons)
            t_tot = float(self.dnn.layers[l].neurons)
            _, n_j = self._size_stats(l, ps)
            _, n_i = self._size_stats(l - 1, ps)
            a = (s_tot * n_j - np.minimum(s_tot, n_j * s_tot)) / ps
            e = (n_i * t_tot - np.minimum(n_i * t_tot, t_tot)) / ps
        elif self.cluster.machines < _FLOOR_MACHINES:  # speed only: 0 is a floor too
            a, e = np.zeros(size), np.zeros(size)
        else:
            tab = self._lower.get(l)
            side = max(u1, u) + 1
            if tab is None or tab.shape[1] < side:
                grown = np.full((10, side, side), np.nan)
                if tab is not None:
                    grown[:, :tab.shape[1], :tab.shape[2]] = tab
                tab = self._lower[l] = grown
            for x, y in np.argwhere(np.isnan(tab[0][1:u1 + 1, 1:u + 1])):
                tab[:, x + 1, y + 1] = self._bounds(l, int(x) + 1, int(y) + 1)
            grid = tab[:, 1:u1 + 1, 1:u + 1]                        # (10, P', P) compressed
            pc1 = np.arange(1, u1 + 1, dtype=float)[:, None]
            pc = np.arange(1, u + 1, dtype=float)[None, :]
            low_a = np.maximum(grid[0], (grid[4] - np.minimum(grid[5], grid[6])) / pc)
            low_e = np.maximum(grid[1], (grid[7] - np.minimum(grid[8], grid[9])) / pc1)
            a_c, e_c = low_a.min(axis=0), low_e.min(axis=1)         # by compressed P, P'
            a = a_c[np.minimum(ps, u) - 1]
            e = e_c[np.minimum(ps, u1) - 1]
        got = self._floors[l] = (np.concatenate([[np.inf], a]), np.concatenate([[np.inf], e]))
        return got[0][:p_max + 1], got[1][:p_max + 1]

    def _size_stats(self, l: int, parts: np.ndarray):
        """(largest segment, non-empty segments) of layer ``l`` cut in each of ``parts``."""
        out = np.empty((2, len(parts)))
        for k, c in enumerate(parts):
            got = self._stats_of.get((l, int(c)))
            if got is None:
                s = pt.cached_segment_sizes(self.dnn.layers[l], int(c))
                got = self._stats_of[(l, int(c))] = (float(s.max()), np.count_nonzero(s))
            out[:, k] = got
        return out[0], out[1].astype(np.int64)

    def _bounds(self, l: int, p1: int, p: int) -> tuple:
        """(best-partner A, best-partner E, counting A, counting E, then :func:`_sums` of the
        activation and of the error matrix) of (l, P', P)."""
        prev_layer, layer = self.dnn.layers[l - 1], self.dnn.layers[l]
        act = pt.cached_transfer_matrix(prev_layer, layer, p1, p, False)
        err = pt.cached_transfer_matrix(prev_layer, layer, p1, p, True)
        a_in, e_in = act.sum(axis=0), err.sum(axis=1)
        bp_a = float((a_in - act.max(axis=0)).max())
        bp_e = float((e_in - err.max(axis=1)).max())
        s = pt.cached_segment_sizes(prev_layer, p1) > 0
        t = pt.cached_segment_sizes(layer, p) > 0
        n_i, n_j = int(s.sum()), int(t.sum())
        cnt_a = float(np.sort(a_in[t])[n_j - n_i - 1]) if n_j > n_i else 0.0
        cnt_e = float(np.sort(e_in[s])[n_i - n_j - 1]) if n_i > n_j else 0.0
        return (bp_a, bp_e, cnt_a, cnt_e, *_sums(act), *_sums(err))

    def _range(self, l: int, p1: int, r1: int, p: int, r: int):
        """For a transition with empty segments (P' > rows of l-1 or P > rows of l), the
        range of its items (:func:`_item_range` of the compressed problem, which brackets
        the expanded one's: module docstring); None otherwise."""
        u1, u = self._units[l - 1], self._units[l]
        if p1 <= u1 and p <= u:
            return None
        key = (l, min(p1, u1), r1, min(p, u), r)
        if key not in self._ranges:
            c1, c = key[1], key[3]
            prev_layer, layer = self.dnn.layers[l - 1], self.dnn.layers[l]
            act = pt.cached_transfer_matrix(prev_layer, layer, c1, c, False)
            err = pt.cached_transfer_matrix(prev_layer, layer, c1, c, True)
            self._ranges[key] = _item_range(act, err, c1, r1, c, r)
        return self._ranges[key]

    def lazy(self, l: int, prev: tuple, cur: tuple) -> bool:
        """True when :meth:`item_matrix` (``lazy=True``) gave this transition the lower end
        of its range instead of its items (rule 5)."""
        key = (l, tuple(map(int, prev)), tuple(map(int, cur)))
        if key in self._items or self._dense[l]:
            return False
        got = self._range(l, *key[1], *key[2])
        return got is not None and got[:2] != got[2:]

    # -- pricing one transition
    def _dense_items(self, l: int, prev_parts: np.ndarray, parts: np.ndarray):
        """Closed form of the items of a dense consumer with R' = R = 1, every (P', P) at once.

        With s_i the P' segment sizes of layer l-1 and t_j the P sizes of
        layer l, the affinity of segment j for the worker of i is s_i + t_j
        when both are non-empty, else 0.  An assignment's value is the sum of
        s_i + t_j over its non-empty pairs, at most the m largest s plus the m
        largest t (n = non-empty count, m = min(n_i, n_j) pairs), reached
        exactly when the pairs use a largest-m multiset on each side: every
        optimal assignment, whatever its tie-break, pairs the non-empty
        segments with the same *values*, so A(l, j) = S - s_partner
        and E(l-1, i) = T - t_partner have the same maxima: S - (n_j-th
        largest s) if n_j <= n_i else S (an unpaired segment reads all S), and
        T - (n_i-th largest t) if n_i <= n_j else T.
        """
        prev_layer, layer = self.dnn.layers[l - 1], self.dnn.layers[l]
        s_total = float(sum(pt.cached_segment_sizes(prev_layer, 1)))
        t_total = float(sum(pt.cached_segment_sizes(layer, 1)))

        def sorted_sizes(index, counts):
            out = np.zeros((len(counts), int(counts.max())))
            nonempty = np.empty(len(counts), dtype=np.int64)
            for k, c in enumerate(counts):
                s = self._sorted.get((index, int(c)))
                if s is None:
                    s = self._sorted[(index, int(c))] = np.sort(
                        pt.cached_segment_sizes(self.dnn.layers[index], int(c)))[::-1]
                out[k, :c] = s
                nonempty[k] = np.count_nonzero(s)
            return out, nonempty

        s, n_i = sorted_sizes(l - 1, prev_parts)
        t, n_j = sorted_sizes(l, parts)
        ni, nj = n_i[:, None], n_j[None, :]
        s_m = s[np.arange(len(prev_parts))[:, None], np.minimum(nj, ni) - 1]
        t_m = t[np.arange(len(parts))[None, :], np.minimum(nj, ni) - 1]
        a = np.where(nj <= ni, s_total - s_m, s_total)
        e = np.where(ni <= nj, t_total - t_m, t_total)
        return a, e

    def _price(self, l: int, p1: int, r1: int, p: int, r: int) -> tuple[float, float]:
        if self._dense[l] and r1 == 1 and r == 1:
            a, e = self._dense_items(l, np.array([p1]), np.array([p]))
            self.stats["closed_form"] += 1
            return float(a[0, 0]), float(e[0, 0])
        prev_layer, layer = self.dnn.layers[l - 1], self.dnn.layers[l]
        if self._dense[l]:  # dense consumer, replicated: the matching by counting (1b)
            workers = self._dense_mapping(l, p1, r1, p, r)
            self.stats["dense"] += 1
            self._workers[(l, (p1, r1), (p, r))] = workers
            return _dense_items_of(
                np.asarray(pt.cached_segment_sizes(prev_layer, p1), dtype=np.int64),
                np.asarray(pt.cached_segment_sizes(layer, p), dtype=np.int64),
                workers, p1, r1, p, r)
        got = self._range(l, p1, r1, p, r)
        if got is not None and got[:2] == got[2:]:  # empty segments, tie-free compressed problem
            self.stats["compressed"] += 1
            return got[:2]
        act = pt.cached_transfer_matrix(prev_layer, layer, p1, p, False)
        err = pt.cached_transfer_matrix(prev_layer, layer, p1, p, True)
        aff = _affinity(act, err, p1, r1, p, r)
        workers = _greedy(aff)
        if workers is not None:
            self.stats["greedy"] += 1
        else:
            workers = match_segments(aff)
            self.stats["matched"] += 1
        self._workers[(l, (p1, r1), (p, r))] = workers
        return _items_of(act, err, workers, p1, r1, p, r)

    def _dense_mapping(self, l: int, p1: int, r1: int, p: int, r: int) -> np.ndarray:
        """:func:`_dense_workers` of a transition into a dense consumer (any R', R)."""
        return _dense_workers(
            np.asarray(pt.cached_segment_sizes(self.dnn.layers[l - 1], p1), dtype=np.int64),
            np.asarray(pt.cached_segment_sizes(self.dnn.layers[l], p), dtype=np.int64),
            p1, r1, p, r)

    def mapping(self, l: int, prev: tuple, cur: tuple) -> np.ndarray:
        """Worker of each segment of layer l matched against a canonical layer l-1: exactly
        :func:`optimizer.matching.map_layer`'s mapping (module docstring)."""
        key = (l, tuple(map(int, prev)), tuple(map(int, cur)))
        if key not in self._workers and self._dense[l]:
            self._workers[key] = self._dense_mapping(l, *key[1], *key[2])
        if key not in self._workers:
            (p1, r1), (p, r) = key[1], key[2]
            prev_layer, layer = self.dnn.layers[l - 1], self.dnn.layers[l]
            aff = _affinity(pt.cached_transfer_matrix(prev_layer, layer, p1, p, False),
                            pt.cached_transfer_matrix(prev_layer, layer, p1, p, True), p1, r1, p, r)
            workers = _greedy(aff)
            self._workers[key] = match_segments(aff) if workers is None else workers
        return self._workers[key]


#: Machines from which :meth:`Pricer.transfer_floors` bounds the items of transitions
#: into a layer that is not dense (every pair of segment counts, through the transfer
#: matrices); below, those floors are 0, still lower bounds (speed only: on small
#: clusters the matrices cost more than the tighter bounds save).
_FLOOR_MACHINES = 256


def _sums(matrix: np.ndarray) -> tuple[float, float, float]:
    """(total, sum of the row maxima, sum of the column maxima) of a transfer matrix."""
    if not matrix.size:
        return 0.0, 0.0, 0.0
    return float(matrix.sum()), float(matrix.max(axis=1).sum()), float(matrix.max(axis=0).sum())


def _mean_bounds(act_sums, err_sums, p1, r1, p, r):
    """Lower bounds on max A and max E through their means (rule 4), from :func:`_sums`.

    With layer l-1 canonical on R' blocks of P' workers and layer l's R
    replicas of P segments, the activations a segment is spared come from
    its worker, whose block must pair with its replica, so the savings over
    all segments are at most R times the column maxima and, one segment per
    worker, min(R, R') times the row maxima (only the blocks b = rho mod R'
    of replicas rho < R hold what a replica reads).  Hence mean_p A >=
    (R sum(act) - that) / (R P), and max_p A is at least the mean.  The error
    terms alike: at most R' times the row maxima (one per worker) and
    min(R, R') times the column maxima (replica rho of layer l feeds only
    the blocks b with rho = b mod R).  All operands are exact integers, and
    correctly rounded division is monotone, so rounding keeps the bounds
    below the items.
    """
    a_tot, a_row, a_col = act_sums
    e_tot, e_row, e_col = err_sums
    both = np.minimum(r1, r)
    mean_a = (r * a_tot - np.minimum(both * a_row, r * a_col)) / (r * p)
    mean_e = (r1 * e_tot - np.minimum(r1 * e_row, both * e_col)) / (r1 * p1)
    return mean_a, mean_e


def _reduce_any(mask: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """(n, cols): row g is the OR of the rows of ``mask`` whose group is g."""
    out = np.zeros((n, mask.shape[1]), dtype=bool)
    order = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[order], np.arange(n))
    present = np.bincount(groups, minlength=n) > 0
    if mask.shape[1] and present.any():
        sums = np.add.reduceat(mask[order].astype(np.int32), starts[present], axis=0)
        out[present] = sums > 0
    return out


def _affinity(act, err, p1: int, r1: int, p: int, r: int) -> np.ndarray:
    """:func:`optimizer.matching.layer_affinity` against a canonical layer l-1 (segment
    (p', r') on worker r' P' + p') on max(P' R', P R) workers."""
    aff = np.zeros((max(p1 * r1, p * r), p * r), dtype=np.int64)
    if r1 == 1 and r == 1:
        aff[:p1] = act + err
        return aff
    blocks = np.arange(r1)[:, None]
    cols = np.arange(r)[None, :]
    aff[:p1 * r1] = np.kron(blocks == cols % r1, act) + np.kron(cols == blocks % r, err)
    return aff


#: Segments up to which :func:`_greedy` looks ahead by augmenting paths (speed only).
_LOOKAHEAD = 48


def _greedy(aff: np.ndarray):
    """The lexicographically smallest optimal assignment when some assignment puts every
    segment on a worker of its column maximum; else None.

    Every assignment is worth at most the sum of the column maxima.  When an
    assignment reaches it (a system of distinct representatives of the sets
    "workers of column j's maximum"; a column whose maximum is 0 takes any
    worker), the optimal assignments are exactly those systems, and the
    lexicographically smallest one is built segment by segment: the lowest
    allowed free worker after which the later segments of positive maximum
    can still be matched (an augmenting path, Berge).  This is the mapping
    :func:`optimizer.matching.match_segments` returns (its tie-break is the
    same lexicographic order over the same optimal set), found without the
    assignment solver; tests compare the two.  Beyond ``_LOOKAHEAD`` segments
    only the pass without look-ahead is tried (the solver is faster there).
    """
    n_w, n_s = aff.shape
    colmax = aff.max(axis=0)
    ismax = aff == colmax
    quick = _plain_greedy(ismax, colmax)
    if quick is not None or n_s > _LOOKAHEAD:
        return quick  # beyond _LOOKAHEAD segments the assignment solver is faster (None)
    allowed = [np.flatnonzero(ismax[:, j]) if colmax[j] > 0 else None for j in range(n_s)]
    row_of = np.full(n_s, -1, dtype=np.int64)     # current matching of positive columns
    col_at = np.full(n_w, -1, dtype=np.int64)
    fixed = np.zeros(n_w, dtype=bool)

    def augment(start: int, banned: int) -> bool:
        """Match column ``start`` (unmatched) by an alternating path avoiding fixed rows and
        ``banned``; apply it and return True, or return False and change nothing."""
        parent_col = {start: None}
        via_row = {}
        frontier = [start]
        while frontier:
            nxt = []
            for c in frontier:
                for r in allowed[c]:
                    if fixed[r] or r == banned or r in via_row:
                        continue
                    via_row[r] = c
                    owner = col_at[r]
                    if owner < 0:                      # free row: flip the path back to start
                        while True:
                            prev_row = row_of[c]
                            row_of[c], col_at[r] = r, c
                            if parent_col[c] is None:
                                return True
                            r, c = prev_row, parent_col[c]
                    if owner not in parent_col:
                        parent_col[owner] = c
                        nxt.append(owner)
            frontier = nxt
        return False

    for j in range(n_s):                               # a first matching: greedy, then paths
        if allowed[j] is not None:
            free = allowed[j][col_at[allowed[j]] < 0]
            if free.size:
                row_of[j], col_at[free[0]] = free[0], j
    for j in range(n_s):
        if allowed[j] is not None and row_of[j] < 0 and not augment(j, -1):
            return None                                # no assignment reaches the bound
    workers = np.empty(n_s, dtype=np.int64)
    critical = np.zeros(n_w, dtype=bool)
    for j in range(n_s):
        if allowed[j] is not None:
            critical[:] = False                        # the set of later columns changes
        if row_of[j] >= 0:
            col_at[row_of[j]] = -1
            row_of[j] = -1
        cands = allowed[j] if allowed[j] is not None else np.flatnonzero(~fixed)
        for r in cands:
            if fixed[r] or critical[r]:
                continue
            owner = col_at[r]
            if owner >= 0:
                col_at[r], row_of[owner] = -1, -1
                if not augment(owner, r):
                    # every matching of the later positive columns uses r; while only zero
                    # columns are fixed that set of columns, hence this, does not change
                    col_at[r], row_of[owner] = owner, r
                    critical[r] = allowed[j] is None
                    continue
            break
        else:  # unreachable: the matching of the later columns leaves a row for j
            return None
        workers[j] = r
        fixed[r] = True
    return workers


def _dense_workers(s: np.ndarray, t: np.ndarray, p1: int, r1: int, p: int, r: int) -> np.ndarray:
    """:func:`~optimizer.matching.match_segments` of a dense consumer's affinity
    (:func:`_affinity`, any R', R), without an assignment solver (module docstring,
    "Pricing a transition", 1b).

    ``s``: the P' segment sizes of layer l-1, ``t``: the P sizes of layer l.
    """
    n_w, n_s = max(p1 * r1, p * r), p * r
    k = np.arange(p1 * r1)
    b, sk = k // p1, s[k % p1]
    c = np.arange(n_s)
    rho, tc = c // p, t[c % p]
    if r >= r1:   # replica rho pairs with block rho mod R'; its errors go to block rho only
        n_comp, row_comp, col_comp = r1, b, rho % r1
        x, y = sk, np.where(rho < r1, tc, 0)
    else:         # block b pairs with replica b mod R; activations only from block rho
        n_comp, row_comp, col_comp = r, b % r, rho
        x, y = np.where(b < r, sk, 0), tc
    must, may, never, free = 0, 1, 2, 3
    row_kind = np.full(n_w, free)                 # empty segments and idle workers: free
    col_kind = np.full(n_s, free)                 # empty segments: free
    quota_r, quota_c = np.zeros(n_comp, dtype=np.int64), np.zeros(n_comp, dtype=np.int64)
    for g in range(n_comp):
        rows = np.flatnonzero((row_comp == g) & (sk > 0))
        cols = np.flatnonzero((col_comp == g) & (tc > 0))
        m = min(len(rows), len(cols))
        for idx, val, kind, quota in ((rows, x, row_kind, quota_r), (cols, y, col_kind, quota_c)):
            if not m:
                kind[idx] = never
                continue
            v = val[idx]
            theta = np.sort(v)[::-1][m - 1]           # the m-th largest value
            kind[idx] = np.where(v > theta, must, np.where(v == theta, may, never))
            quota[g] = m - int((v > theta).sum())
    cls_r = np.where(row_kind == free, 3 * n_comp,
                     3 * np.concatenate([row_comp, np.zeros(n_w - len(row_comp), dtype=np.int64)])
                     + row_kind)
    members = [np.flatnonzero(cls_r == q).tolist() + [n_w] for q in range(3 * n_comp + 1)]
    head = [0] * (3 * n_comp + 1)                 # next free row of each class (in order)
    left_r = [int(((cls_r == 3 * g + may)).sum()) for g in range(n_comp)]
    left_c = [int(((col_comp == g) & (col_kind == may)).sum()) for g in range(n_comp)]
    quota_r, quota_c = quota_r.tolist(), quota_c.tolist()
    out = np.empty(n_s, dtype=np.int64)
    for j, (kind, g) in enumerate(zip(col_kind.tolist(), col_comp.tolist())):
        pairable = kind == must or (kind == may and quota_c[g] > 0)
        loose = kind in (free, never) or (kind == may and left_c[g] - 1 >= quota_c[g])
        best, cls = n_w, -1
        if pairable:
            for q in (3 * g + must, 3 * g + may) if quota_r[g] > 0 else (3 * g + must,):
                w = members[q][head[q]]
                if w < best:
                    best, cls = w, q
        if loose:
            for h in range(n_comp):
                if kind != free and h == g:
                    continue    # a row of its own component would pair with it
                for q in (3 * h + never, 3 * h + may) if left_r[h] - 1 >= quota_r[h] else \
                        (3 * h + never,):
                    w = members[q][head[q]]
                    if w < best:
                        best, cls = w, q
            w = members[3 * n_comp][head[3 * n_comp]]
            if w < best:
                best, cls = w, 3 * n_comp
        head[cls] += 1
        out[j] = best
        h, row = divmod(cls, 3)
        paired = kind in (must, may) and h == g and row in (must, may)
        if row == may and h < n_comp:
            left_r[h] -= 1
            quota_r[h] -= paired
        if kind == may:
            left_c[g] -= 1
            quota_c[g] -= paired
    return out


def _tie_free_items(act, err, p1: int, r1: int, p: int, r: int):
    """The items every optimal assignment gives, or None if that is not shown
    (:func:`_item_range` closed on both ends)."""
    got = _item_range(act, err, p1, r1, p, r)
    if got is not None and got[:2] == got[2:]:
        return got[:2]
    return None


def _item_range(act, err, p1: int, r1: int, p: int, r: int):
    """(low A, low E, high A, high E): the range of the items over all optimal assignments.

    From one optimal assignment (scipy) and its optimal duals (a longest-path
    pass, exact in int64), the edges some optimal assignment uses are the
    tight edges on an alternating cycle (same strongly connected component,
    Dulmage-Mendelsohn).  Each segment's saving (the activations, resp. error
    terms, its partner spares it) then lies between its least and largest
    saving over those edges (a dummy worker or column: 0), which brackets
    max_p A and max_p E over all optimal assignments; with R' = R = 1 the
    counting bound of :meth:`Pricer.item_bounds` raises the lower end.  When
    both brackets close, the items are the same for every optimal
    assignment, whatever its tie-break (module docstring, "Empty segments").
    None if the duals do not settle (not expected: the assignment is optimal).
    """
    n_w, n_s = max(p1 * r1, p * r), p * r
    blocks, cols = np.arange(r1)[:, None], np.arange(r)[None, :]
    save_a = np.zeros((n_w, n_w), dtype=np.int64)
    save_e = np.zeros((n_w, n_w), dtype=np.int64)
    save_a[:p1 * r1, :n_s] = np.kron(blocks == cols % r1, act)
    save_e[:p1 * r1, :n_s] = np.kron(cols == blocks % r, err)
    sq = save_a + save_e
    rows, order = linear_sum_assignment(sq.astype(float), maximize=True)
    row_of = np.empty(n_w, dtype=np.int64)
    row_of[order] = rows
    matched = sq[row_of, np.arange(n_w)]
    gain = sq - matched[None, :]
    u = np.zeros(n_w, dtype=np.int64)
    for _ in range(n_w + 2):
        new = np.maximum(u, (u[row_of][None, :] + gain).max(axis=1))
        if np.array_equal(new, u):
            break
        u = new
    else:
        return None
    v = matched - u[row_of]
    tight = (u[:, None] + v[None, :]) == sq
    col_of = np.empty(n_w, dtype=np.int64)
    col_of[row_of] = np.arange(n_w)
    _, comp = connected_components(csr_matrix(tight[row_of]), directed=True, connection="strong")
    usable = tight & (comp[col_of][:, None] == comp[None, :])
    big = np.iinfo(np.int64).max
    a_max = np.where(usable, save_a, -1).max(axis=0)[:n_s]       # per segment of layer l
    a_min = np.where(usable, save_a, big).min(axis=0)[:n_s]
    e_max = np.where(usable, save_e, -1).max(axis=1)[:p1 * r1]   # per segment of layer l-1
    e_min = np.where(usable, save_e, big).min(axis=1)[:p1 * r1]
    a_in, e_in = act.sum(axis=0), err.sum(axis=1)
    a_lo = (a_in[None, :] - a_max.reshape(r, p)).sum(axis=0) / r
    a_hi = (a_in[None, :] - a_min.reshape(r, p)).sum(axis=0) / r
    e_lo = (e_in[None, :] - e_max.reshape(r1, p1)).sum(axis=0) / r1
    e_hi = (e_in[None, :] - e_min.reshape(r1, p1)).sum(axis=0) / r1
    low_a, low_e = float(a_lo.max()), float(e_lo.max())
    if r1 == 1 and r == 1:  # at most `givers` segments are spared anything, the rest nothing
        givers_a, givers_e = int((act.sum(axis=1) > 0).sum()), int((err.sum(axis=0) > 0).sum())
        if p > givers_a:
            low_a = max(low_a, float(np.sort(a_in)[p - givers_a - 1]))
        if p1 > givers_e:
            low_e = max(low_e, float(np.sort(e_in)[p1 - givers_e - 1]))
    return low_a, low_e, float(a_hi.max()), float(e_hi.max())


def _plain_greedy(ismax: np.ndarray, colmax: np.ndarray):
    """Segment by segment, the lowest free worker of the column maximum (any free worker for
    a zero column); None as soon as one has none left.  When it completes, no choice
    needed a look-ahead, so it is the assignment of :func:`_greedy` (and its fast path)."""
    rows, cols = np.nonzero(ismax.T)          # per column, its maximal rows in order
    bounds = np.searchsorted(rows, np.arange(ismax.shape[1] + 1))
    cols = cols.tolist()
    used = set()
    out = []
    free = 0
    for j, pos in enumerate(colmax > 0):
        if pos:
            for r in cols[bounds[j]:bounds[j + 1]]:
                if r not in used:
                    break
            else:
                return None
        else:
            while free in used:
                free += 1
            r = free
        used.add(r)
        out.append(r)
    return np.array(out, dtype=np.int64)


def _mapping_indices(workers, p1: int, r1: int, p: int, r: int) -> tuple:
    """The index arrays of a mapping that :func:`_items_of` and :func:`_dense_items_of`
    count over: layer l's segments (replica ``rr``, part ``pp``), whether each sits on a
    worker of layer l-1 (``valid``, that worker's replica ``blk`` and part ``ii``), and
    per worker of layer l-1 the segment on it (``on``, -1: none), its part ``ip`` and
    whether that segment belongs to its replica (``has``)."""
    cols = np.arange(p * r)
    rr, pp = cols // p, cols % p
    valid = (workers >= 0) & (workers < p1 * r1)
    blk, ii = workers // p1, workers % p1
    on = np.full(p1 * r1, -1, dtype=np.int64)
    on[workers[valid]] = cols[valid]
    k = np.arange(p1 * r1)
    rp, ip = k // p1, k % p1
    has = (on >= 0) & (on // p == rp % r)
    return rr, pp, valid, blk, ii, on, ip, has


def _items_of(act, err, workers, p1: int, r1: int, p: int, r: int) -> tuple[float, float]:
    """max_p A(l, p) and max_p E(l-1, p), averaged over layer replicas, as the layer-wise
    model counts them (:func:`perfmodel.layerwise.layer_costs`) for layer l-1 on worker
    k = r' P' + p' (canonical) and layer l's segment (p, r) on ``workers[r P + p]``
    (-1: a worker with nothing of layer l-1 that it reads or feeds)."""
    rr, pp, valid, blk, ii, on, ip, has = _mapping_indices(workers, p1, r1, p, r)
    saved = np.where(valid & (blk == rr % r1), act[np.where(valid, ii, 0), pp], 0)
    a_seg = act.sum(axis=0)[pp] - saved
    a = a_seg.reshape(r, p).sum(axis=0) / r
    saved_e = np.where(has, err[ip, np.where(on >= 0, on % p, 0)], 0)
    e_seg = err.sum(axis=1)[ip] - saved_e
    e = e_seg.reshape(r1, p1).sum(axis=0) / r1
    return float(a.max()), float(e.max())


def _dense_items_of(s, t, workers, p1: int, r1: int, p: int, r: int) -> tuple[float, float]:
    """:func:`_items_of` for a dense consumer, whose activation matrix is s_i [t_p > 0] and
    error matrix [s_i > 0] t_p (:func:`perfmodel.partition.is_dense_pair`), without
    building either: the same integers, hence the same items."""
    rr, pp, valid, blk, ii, on, ip, has = _mapping_indices(workers, p1, r1, p, r)
    live = t > 0
    saved = np.where(valid & (blk == rr % r1), s[np.where(valid, ii, 0)] * live[pp], 0)
    a_seg = int(s.sum()) * live[pp] - saved
    a = a_seg.reshape(r, p).sum(axis=0) / r
    full = s[ip] > 0
    saved_e = np.where(has, full * t[np.where(on >= 0, on % p, 0)], 0)
    e_seg = full * int(t.sum()) - saved_e
    e = e_seg.reshape(r1, p1).sum(axis=0) / r1
    return float(a.max()), float(e.max())


def _read_costs(model, dnn, cluster, config, replicas, threads) -> np.ndarray:
    """(n_replicas, n_threads, L) per-sample weight-read cost of each layer for each (R, H)."""
    shape = (len(replicas), len(threads), len(dnn.layers))
    h = np.broadcast_to(threads[None, :, None], shape)
    r = np.broadcast_to(np.asarray(replicas)[:, None, None], shape)
    reads = model.weight_read_layers(dnn, cluster, config, h, r)["M_w"]
    return np.asarray(reads) * model.reads_per_sample(cluster, config)


def _node_tables(pricer: Pricer, config: Config, pairs: np.ndarray, threads: np.ndarray):
    """Per layer, (n_pairs, n_threads): compute over Q(l) plus the layer's share of M_w."""
    model, dnn, cluster = pricer.layer_model, pricer.dnn, pricer.cluster
    r_values, r_index = np.unique(pairs[:, 1], return_inverse=True)
    reads = _read_costs(model, dnn, cluster, config, r_values, threads)[r_index]
    interf = lw.interference_factor(threads, cluster.interference)
    q = threads[None, :] * pairs[:, 1:2] * config.n_replicas
    p_max = int(pairs[:, 0].max())
    return [pricer.compute_table(l, p_max)[pairs[:, 0]][:, None] * interf[None, :] / q
            + reads[:, :, l] for l in range(len(dnn.layers))]


#: Relative slack of every bound test: a state or triple is dropped only when its lower
#: bound exceeds the bound by this much, far above the rounding of a few hundred sums.
_SLACK = 1e-9

#: Transitions priced per block of the vectorized step (bounds memory, not results).
_BLOCK = 1 << 21


def _lag(cluster: Cluster, threads: np.ndarray) -> np.ndarray:
    """g(H) = C_ncost(H) / H: how a transfer's time over Q depends on H (module docstring)."""
    return lw.thread_latency(cluster.latency, threads, cluster.latency_per_thread) / threads


def solve(pricer: Pricer, config: Config, *, max_threads: int | None = None,
          bound: float | None = None, _checked: bool = False) -> DPResult | None:
    """The best plan for ``config``'s (N_ps, N_mr, N_wr) by dynamic programming over layers.

    Parameters
    ----------
    pricer : Pricer
        Model, DNN and cluster (with its caches).
    config : Config
        The resource triple; ``epoch_samples`` gives N_sample (default 10^6).
    max_threads : int, optional
        Cap on H(l) below the cluster's cores (C2).
    bound : float, optional
        Only plans with T_epoch <= ``bound`` are wanted: states and
        transitions whose lower bound exceeds it are not priced (module
        docstring, rules 3-4).  The answer is exact whenever the optimum is
        <= ``bound`` (up to the 1e-9 slack); otherwise it is None.

    Returns
    -------
    DPResult, or None when the triple has no plan within ``bound``
    """
    samples = config.epoch_samples or 1_000_000
    pairs, threads, nodes, row_min, layer_min, others, after, leave = _program(
        pricer, config, max_threads)
    n_layers = len(nodes)
    limit = np.inf if bound is None else bound / samples * (1 + _SLACK)
    n_mr = config.n_replicas
    if np.isfinite(limit) and not _checked:  # rule 2: every transition at its lower bounds
        got = _forward(pricer, pairs, threads, nodes, row_min, layer_min, others, after, leave, limit,
                       n_mr, relaxed=True)
        if got is None or float(got[0].min()) > limit:
            return None

    while True:
        got = _forward(pricer, pairs, threads, nodes, row_min, layer_min, others, after, leave, limit,
                       n_mr)
        if got is None:
            return None
        best, back, alive, n_states = got
        idx = int(best.argmin())
        per_sample = float(best.flat[idx])
        if per_sample > limit:  # also when some transitions are lower bounds: they only lower it
            return None
        states = _trace(idx, back, alive, pairs, threads)
        # rule 5: transitions priced at a lower bound on the best path are priced exactly
        # and the program is run again, until the best path is priced exactly throughout
        lazy = [(l, states[l - 1][:2], states[l][:2]) for l in range(1, n_layers)
                if pricer.lazy(l, states[l - 1][:2], states[l][:2])]
        if not lazy:
            break
        for l, prev, cur in lazy:
            pricer.items(l, prev, cur)
    return DPResult(config, per_sample, per_sample * samples, tuple(states), n_states,
                    pricer.exact, pricer)


def _program(pricer: Pricer, config: Config, max_threads):
    """The state space and node tables of a triple, with their minima (rule 3), kept for
    the last few triples (a triple is often run again with another bound, rule 7)."""
    key = (config.n_ps, config.n_replicas, config.n_workers, config.epoch_samples, max_threads)
    got = pricer._programs.pop(key, None)
    if got is None:
        pairs, threads = state_space(config, pricer.cluster, max_threads)
        nodes = _node_tables(pricer, config, pairs, threads)
        # rule 11: each state with its least transfer charges, for the bounds only
        per = (pairs[:, 1] * config.n_replicas).astype(float)[:, None]
        charge_a, charge_e = _charges(pricer, int(pairs[:, 0].max()), threads, parts=True)
        leave = [charge_e[l][:, pairs[:, 0]].T / per for l in range(len(nodes))]
        row_min = [(n + charge_a[l][:, pairs[:, 0]].T / per + leave[l]).min(axis=1)
                   for l, n in enumerate(nodes)]
        layer_min = np.array([m.min() for m in row_min])
        others = layer_min.sum() - layer_min
        after = np.concatenate([np.cumsum(layer_min[::-1])[::-1][1:], [0.0]])  # sum over k > l
        got = (pairs, threads, nodes, row_min, layer_min, others, after, leave)
    pricer._programs[key] = got           # most recent last
    while len(pricer._programs) > _PROGRAMS:
        pricer._programs.pop(next(iter(pricer._programs)))
    return got


#: Triples whose node tables :func:`_program` keeps (memory only).
_PROGRAMS = 4


def relaxed_value(pricer: Pricer, config: Config, bound: float, *,
                  max_threads: int | None = None) -> float | None:
    """T_epoch of the program with every transition at its lower bounds (rule 2), if it is
    <= ``bound``; else None.  A lower bound on the triple's optimum."""
    samples = config.epoch_samples or 1_000_000
    pairs, threads, nodes, row_min, layer_min, others, after, leave = _program(
        pricer, config, max_threads)
    limit = bound / samples * (1 + _SLACK)
    got = _forward(pricer, pairs, threads, nodes, row_min, layer_min, others, after, leave, limit,
                   config.n_replicas, relaxed=True)
    if got is None or float(got[0].min()) > limit:
        return None
    return float(got[0].min()) * samples


def _forward(pricer, pairs, threads, nodes, row_min, layer_min, others, after, leave, limit, n_mr,
             relaxed=False):
    """The program's forward pass under rules 3-5: (last layer's table, back pointers, its
    states, states priced), or None when no state survives the bound."""
    cluster = pricer.cluster
    lag = _lag(cluster, threads)
    c_item = cluster.activation_bytes / cluster.effective_bandwidth
    alive = np.flatnonzero(row_min[0] + others[0] <= limit)
    best = nodes[0][alive]
    back, n_states = [], len(alive) * len(threads)
    for l in range(1, len(nodes)):
        # rule 3: drop what cannot lead to a plan within the bound (cost-to-go >= node minima)
        kept = np.flatnonzero(best.min(axis=1) + layer_min[l] + after[l] <= limit)
        alive, best = alive[kept], best[kept]
        cur = np.flatnonzero(row_min[l] + others[l] <= limit)
        if len(alive):
            cur = cur[best.min() + row_min[l][cur] + after[l] <= limit]
        if not len(alive) or not len(cur):
            return None
        if relaxed:  # rule 10: values only, predecessors in increasing order of their best
            step, best = None, _relaxed_step(pricer, l, pairs, alive, cur, best, nodes[l][cur],
                                             lag, c_item, n_mr, limit - after[l])
        else:
            step, best = _step(pricer, l, pairs, alive, cur, best, nodes[l][cur], lag, c_item,
                               n_mr, limit - after[l], leave[l][cur])
        back.append((kept, step))
        alive = cur
        n_states += len(cur) * len(threads)
    if not len(alive):
        return None
    return best, back, alive, n_states


def _step(pricer, l, pairs, prev, cur, best, node, lag, c_item, n_mr, room=np.inf, leave=0.0):
    """One layer of the program over (P, R) pairs, threads folded in (module docstring).

    ``room``: the bound minus the charged node minima of the layers after l
    (rule 11); a transition whose lower bound (:meth:`Pricer.item_bounds`, and
    ``leave``: each state's floor on the error part it will send back) cannot
    fit in it is not priced (rule 4) and costs +inf.
    """
    r_prev = pairs[prev, 1].astype(float) * n_mr
    r_cur = pairs[cur, 1].astype(float) * n_mr
    b0, h0 = best.min(axis=1), best.argmin(axis=1)
    with_lag = best + lag[None, :] / r_prev[:, None]
    b1, h1 = with_lag.min(axis=1), with_lag.argmin(axis=1)
    n_cur = len(cur)
    c0, i0 = np.full(n_cur, np.inf), np.zeros(n_cur, dtype=np.int64)
    c1, i1 = np.full(n_cur, np.inf), np.zeros(n_cur, dtype=np.int64)
    e_pos = np.zeros((len(prev), n_cur), dtype=bool)
    if np.isfinite(room):  # with the error terms the state will receive (rule 11)
        n0 = (node + leave).min(axis=1)
        n1 = (node + leave + lag[None, :] / r_cur[:, None]).min(axis=1)
    width = max(1, _BLOCK // max(len(prev), 1))
    for lo in range(0, n_cur, width):
        sl = slice(lo, lo + width)
        a_lb, e_lb = pricer.item_bounds(l, pairs[prev], pairs[cur[sl]])
        # rule 8: only the transitions that can be a state's best (or tie with it)
        mask = np.ones(a_lb.shape, dtype=bool)
        if np.isfinite(room):
            low = (np.where(e_lb > 0, b1[:, None] + e_lb * c_item / r_prev[:, None],
                            b0[:, None])
                   + np.where(a_lb > 0, n1[None, sl] + a_lb * c_item / r_cur[None, sl],
                              n0[None, sl]))
            mask = low <= room
        a, e = _lazy_items(pricer, l, pairs[prev], pairs[cur[sl]], mask, a_lb, e_lb,
                           b0, b1, c_item, r_prev, r_cur[sl])
        e_pos[:, sl] = e > 0
        y0, y1 = _arrivals(a, e, b0, b1, c_item, r_prev, r_cur[sl])
        c0[sl], i0[sl] = _first_min(y0)
        c1[sl], i1[sl] = _first_min(y1)
    via1 = c1[:, None] + lag[None, :] / r_cur[:, None]
    use1 = via1 < c0[:, None]
    new = node + np.where(use1, via1, c0[:, None])
    return (prev, i0, i1, use1, h0, h1, e_pos), new


#: Predecessors in the first chunk of :func:`_relaxed_step` (speed only).
_RELAXED_CHUNK = 64


def _relaxed_step(pricer, l, pairs, prev, cur, best, node, lag, c_item, n_mr, room):
    """:func:`_step`'s new table with every transition at its lower bounds, exact wherever
    it is <= ``room`` (elsewhere above ``room`` too, which the next layer drops: rule 10).

    A state's value through a predecessor is at least that predecessor's best b0 plus
    its node cost (transitions cost >= 0), so predecessors are taken in chunks of
    increasing b0, each only for the states whose value (for some thread count) it could
    still lower within ``room``; once no state is left, the rest cannot change a value.
    """
    r_prev = pairs[prev, 1].astype(float) * n_mr
    r_cur = pairs[cur, 1].astype(float) * n_mr
    b0 = best.min(axis=1)
    b1 = (best + lag[None, :] / r_prev[:, None]).min(axis=1)
    n0 = node.min(axis=1)
    slow = lag.max() / r_cur          # the largest arrival latency of each state
    order = np.argsort(b0, kind="stable")
    c0, c1 = np.full(len(cur), np.inf), np.full(len(cur), np.inf)
    lo, width = 0, _RELAXED_CHUNK
    while lo < len(order):
        rows = order[lo:lo + width]
        least = b0[rows[0]]
        cols = np.flatnonzero((least < np.minimum(c0, c1 + slow)) & (least + n0 <= room))
        if not len(cols):
            break  # later predecessors have b0 >= least: they lower no value within room
        a, e = pricer.item_bounds(l, pairs[prev[rows]], pairs[cur[cols]])
        y0, y1 = _arrivals(a, e, b0[rows], b1[rows], c_item, r_prev[rows], r_cur[cols])
        c0[cols] = np.minimum(c0[cols], y0.min(axis=0))
        c1[cols] = np.minimum(c1[cols], y1.min(axis=0))
        lo, width = lo + width, 2 * width
    via1 = c1[:, None] + lag[None, :] / r_cur[:, None]
    return node + np.minimum(via1, c0[:, None])


def _arrivals(a, e, b0, b1, c_item, r_prev, r_cur):
    """(y0, y1): the cost of reaching each state from each predecessor when no activation
    arrives (+inf if some does) and when some do, before the arrival latency (:func:`_step`)."""
    x = np.where(e > 0, b1[:, None] + e * c_item / r_prev[:, None], b0[:, None])
    return np.where(a > 0, np.inf, x), np.where(a > 0, x + a * c_item / r_cur[None, :], np.inf)


def _first_min(values):
    """(minimum, first index reaching it) of each column."""
    at = values.argmin(axis=0)
    return np.take_along_axis(values, at[None, :], axis=0)[0], at


def _lazy_items(pricer, l, prev_pairs, cur_pairs, mask, a_lb, e_lb, b0, b1, c_item, r_prev,
                r_cur):
    """Items of the transitions where ``mask``, priced only as far as the minima of
    :func:`_step` need them (rule 8); the others keep their lower bounds, which give
    each state a larger (value, index) than its best predecessor's, ties included.

    In rounds: each state whose best priced predecessor, for no arriving
    activations (y0) or some (y1), is not below every unpriced one's lower
    bound (lower, or equal with a smaller index) has that unpriced one priced.
    """
    a, e = a_lb.copy(), e_lb.copy()
    a[~mask], e[~mask] = np.inf, np.inf
    lo0, lo1 = _arrivals(a, e, b0, b1, c_item, r_prev, r_cur)
    lo0[a_lb > 0] = np.inf   # y0 needs no activation to arrive
    lo1 = np.where(mask, np.minimum(lo1, np.where(a_lb > 0, np.inf, lo0)), np.inf)
    priced = ~mask
    y0, y1 = np.full(a.shape, np.inf), np.full(a.shape, np.inf)
    cols = np.arange(a.shape[1])
    while len(cols):
        open0 = np.where(priced[:, cols], np.inf, lo0[:, cols])
        open1 = np.where(priced[:, cols], np.inf, lo1[:, cols])
        (m0, k0), (m1, k1) = _first_min(open0), _first_min(open1)
        (v0, j0), (v1, j1) = _first_min(y0[:, cols]), _first_min(y1[:, cols])
        need0 = np.isfinite(m0) & ((m0 < v0) | ((m0 == v0) & (k0 < j0)))
        need1 = np.isfinite(m1) & ((m1 < v1) | ((m1 == v1) & (k1 < j1)))
        if not (need0.any() or need1.any()):
            break
        rows = np.concatenate([k0[need0], k1[need1]])
        at = np.concatenate([cols[need0], cols[need1]])
        got_a, got_e = pricer.pair_items(l, prev_pairs[rows], cur_pairs[at])
        a[rows, at], e[rows, at] = got_a, got_e
        priced[rows, at] = True
        x = np.where(got_e > 0, b1[rows] + got_e * c_item / r_prev[rows], b0[rows])
        y0[rows, at] = np.where(got_a > 0, np.inf, x)
        y1[rows, at] = np.where(got_a > 0, x + got_a * c_item / r_cur[at], np.inf)
        cols = np.unique(at)
    return a, e


def _trace(idx: int, back: list, last: np.ndarray, pairs: np.ndarray, threads: np.ndarray) -> list:
    """The state sequence ending in flat index ``idx`` of the last layer's table."""
    n_h = len(threads)
    j, h = divmod(idx, n_h)
    states = [(int(pairs[last[j], 0]), int(pairs[last[j], 1]), int(threads[h]))]
    for kept, (prev, i0, i1, use1, h0, h1, e_pos) in reversed(back):
        i = int(i1[j] if use1[j, h] else i0[j])
        h = int(h1[i] if e_pos[i, j] else h0[i])
        states.append((int(pairs[prev[i], 0]), int(pairs[prev[i], 1]), int(threads[h])))
        j = int(kept[i])  # the same state's row in the layer's table before rule 3 dropped some
    return states[::-1]


def estimate_plan(pricer: Pricer, result: DPResult) -> Estimate:
    """The model's own estimate of the program's plan (with the model's options as given)."""
    return pricer.model.evaluate(pricer.dnn, pricer.cluster, result.config, result.plan)


def useful_triples(machines: int, max_workers: int | None = None):
    """(N_ps, N_mr, N_wr) worth solving under C1 (and N_wr <= ``max_workers``), servers pruned exactly.

    T_epoch depends on N_ps only through min(N_ps, N_wr) in eq. 11, where more
    servers never read slower, so for each (N_mr, N_wr) only the most servers
    that can still help, min(N_wr, machines - N_mr N_wr), is solved.  One
    replica without replicated layers needs no server at all (M_w = 0), so one
    replica is solved twice: without a server (its layers cannot be replicated,
    nothing would keep the copies in sync) and with the most useful servers
    (layers may be replicated).
    """
    for n_workers in range(1, min(machines, max_workers or machines) + 1):
        for n_replicas in range(1, machines // n_workers + 1):
            spare = machines - n_workers * n_replicas
            if n_replicas == 1:
                yield 0, 1, n_workers
            if spare >= 1:
                yield min(n_workers, spare), n_replicas, n_workers


def _charges(pricer: Pricer, top: int, threads: np.ndarray, parts: bool = False) -> np.ndarray:
    """(L, n_threads, top + 1): per layer l, thread count H and P, the least transfer time
    a state (P, R, H) of layer l is charged (rule 11), times R N_mr: the arrival of its
    activations from layer l-1 (``lag(H) + a c_item`` if a > 0) and the error terms it
    receives from layer l+1 (``lag(H) + e c_item`` if e > 0), a and e from
    :meth:`Pricer.transfer_floors`.  Entry P = 0 is +inf.  With ``parts``, the two
    charges apart, (2, L, n_threads, top + 1).  Cached, grown on demand."""
    key = tuple(int(h) for h in threads)
    have = pricer._charges.get(key)
    if have is None or have.shape[3] <= top:
        size = pricer.grown(top, have.shape[3] - 1 if have is not None else 0)
        cluster, n_layers = pricer.cluster, len(pricer.dnn.layers)
        lag = _lag(cluster, threads)[:, None]
        c_item = cluster.activation_bytes / cluster.effective_bandwidth
        have = np.zeros((2, n_layers, len(threads), size + 1))
        for l in range(n_layers):
            if l > 0:
                a = pricer.transfer_floors(l, size)[0][None, :]
                have[0, l] = np.where(a > 0, lag + a * c_item, 0.0)
            if l + 1 < n_layers:
                e = pricer.transfer_floors(l + 1, size)[1][None, :]
                have[1, l] = np.where(e > 0, lag + e * c_item, 0.0)
        have[:, :, :, 0] = np.inf
        pricer._charges[key] = have
    got = have[:, :, :, :top + 1]
    return got if parts else got[0] + got[1]


def _charged_prefix(pricer: Pricer, top: int, threads: np.ndarray) -> np.ndarray:
    """(L, n_threads, top + 1): entry [l, H, m] is the least over P <= m of
    compute(l, P) C_interf(H) / H + the transfer charge of (P, H) (:func:`_charges`), so
    that a state (P, R, H) of layer l costs, with its charge, at least
    entry[l, H, P] / (R N_mr) + its read term.  Cached, grown on demand."""
    key = tuple(int(h) for h in threads)
    have = pricer._prefix.get(key)
    if have is not None and have.shape[2] > top:
        return have[:, :, :top + 1]
    size = pricer.grown(top, have.shape[2] - 1 if have is not None else 0)
    interf = lw.interference_factor(threads, pricer.cluster.interference)
    per = (interf / threads)[:, None]
    charges = _charges(pricer, size, threads)
    out = np.stack([np.minimum.accumulate(pricer.compute_table(l, size)[None, :] * per
                                          + charges[l], axis=1)
                    for l in range(len(pricer.dnn.layers))])
    pricer._prefix[key] = out
    return out[:, :, :top + 1]


def triple_bounds(pricer: Pricer, configs, *, max_threads: int | None = None) -> np.ndarray:
    """A lower bound on the T_epoch of every configuration (module docstring, rules 2, 11).

    For each layer the least charged node cost over the triple's states: for
    each (R, H), the least over the P the triple allows with R (P <= N_wr // R)
    of the single-thread compute times C_interf(H) / H plus the state's
    transfer charge (rule 11; :func:`_charged_prefix`), over R N_mr, plus the
    read term, so the bound is <= every plan's value up to rounding.  R is
    tried in growing chunks, and stops once the read term alone at the next R
    exceeds every layer's least cost so far: the read term grows with R (each
    copy of a replicated layer is read; M_w is M_w^min plus ``mw_position`` >=
    0 times M_w^max - M_w^min >= 0, both linear in the bytes read) and the
    other terms are >= 0, so no larger R can give a smaller minimum.
    """
    dnn, cluster, model = pricer.dnn, pricer.cluster, pricer.layer_model
    configs = list(configs)
    if not configs:
        return np.zeros(0)
    top = max(c.n_workers for c in configs)
    threads = np.unique(layer_choices(1, cluster.cores, max_threads=max_threads).threads)
    prefix = _charged_prefix(pricer, top, threads)                     # (L, n_H, top + 1)
    out = np.empty(len(configs))
    for k, config in enumerate(configs):
        r_top = config.n_workers if config.n_ps else 1
        best = np.full(len(dnn.layers), np.inf)
        lo, width = 1, _R_CHUNK
        while lo <= r_top:  # R in chunks, while a larger R can still be cheaper
            r = np.arange(lo, min(r_top, lo + width - 1) + 1)
            reads = _read_costs(model, dnn, cluster, config, r, threads)  # (n_R, n_H, L)
            u1 = prefix[:, :, config.n_workers // r]                       # (L, n_H, n_R)
            node = (u1 / (r * config.n_replicas)[None, None, :]
                    + np.transpose(reads, (2, 1, 0)))
            best = np.minimum(best, node.reshape(len(dnn.layers), -1).min(axis=1))
            lo, width = int(r[-1]) + 1, 4 * width
            if lo > r_top:
                break
            # the read term grows with R and the others are >= 0: once the reads
            # alone at R = lo exceed every layer's best, no larger R is cheaper
            floor = _read_costs(model, dnn, cluster, config, np.array([lo]), threads)
            if (floor[0].min(axis=0) * (1 - _SLACK) > best).all():
                break
        out[k] = best.sum() * (config.epoch_samples or 1_000_000)
    return out


#: First chunk of layer replicas R that :func:`triple_bounds` tries (speed only).
_R_CHUNK = 16


def quick_triple_bounds(pricer: Pricer, configs, *, max_threads: int | None = None) -> np.ndarray:
    """A lower bound on :func:`triple_bounds` of every configuration, all at once (rule 2b).

    R is split into the ranges [2^j, 2^(j+1)).  Per layer and range, the
    least compute term over its R and every H (each state with its least
    transfer charge over H, rule 11) plus the least read term over H at R =
    2^j (the read term grows with R: each copy of a replicated layer is
    read, and M_w is M_w^min plus ``mw_position`` >= 0 times M_w^max -
    M_w^min >= 0, both linear in the bytes read) is at most the least sum
    of the two over that range; the least over the ranges is at most the
    layer's term of :func:`triple_bounds`.  The compute term's minima are
    one table over (range, N_wr) for all configurations, the read term is
    vectorized over configurations; so this costs O(L N log N) rather than
    the O(L K N_wr) per configuration of :func:`triple_bounds`.  Lowered by
    1e-9 relative, so that rounding cannot lift it above
    :func:`triple_bounds`.
    """
    dnn, cluster, model = pricer.dnn, pricer.cluster, pricer.layer_model
    configs = list(configs)
    if not configs:
        return np.zeros(0)
    n_layers = len(dnn.layers)
    n_wr = np.array([c.n_workers for c in configs])
    n_mr = np.array([c.n_replicas for c in configs], dtype=float)
    n_ps = np.array([c.n_ps for c in configs])
    top = int(n_wr.max())
    threads = np.unique(layer_choices(1, cluster.cores, max_threads=max_threads).threads)
    per_thread = float((lw.interference_factor(threads, cluster.interference) / threads).min())
    # rule 11: each state's transfer charge at its least thread count's value
    charge = _charges(pricer, top, threads).min(axis=1)              # (L, top + 1)
    prefix = np.stack([np.minimum.accumulate(pricer.compute_table(l, top) * per_thread
                                             + charge[l]) for l in range(n_layers)])
    n_ranges = top.bit_length()                                      # R in [2^j, 2^(j+1))
    low_r = 2 ** np.arange(n_ranges)
    by_range = np.full((n_layers, n_ranges, top + 1), np.inf)       # min over R of the range
    for w in range(1, top + 1):
        r = np.arange(1, w + 1)
        starts = low_r[low_r <= w] - 1
        by_range[:, :len(starts), w] = np.minimum.reduceat(prefix[:, w // r] / r, starts, axis=1)
    u = np.where((n_ps > 0)[None, None, :], by_range[:, :, n_wr],
                 np.where(np.arange(n_ranges)[None, :, None] == 0, prefix[:, None, n_wr],
                          np.inf))                                   # (L, ranges, n)
    compute = u / n_mr[None, None, :]
    # read terms at R = 2^j, vectorized over configurations (the arithmetic of
    # LayerWise.weight_read_layers, broadcast over n_mr and lanes)
    h = threads.astype(float)[None, :, None]
    reads = np.empty((n_ranges, len(configs), n_layers))
    lanes = np.minimum(np.maximum(n_ps, 1), n_wr).astype(float)[:, None, None]
    bw, lat, per = cluster.effective_bandwidth, cluster.latency, cluster.latency_per_thread
    stall = (cluster.read_period or 1) * (n_mr if model.read_term == "per_replica" else 1.0)
    for j, copies in enumerate(low_r):
        w_bytes = model._weight_bytes(dnn, cluster)[None, None, :] * float(copies)
        if model.read_bandwidth == "machine":
            w_bytes = w_bytes / h
        m_max = lw.weight_read_terms_max(w_bytes, n_mr[:, None, None], bw, h, lat, per)
        m_min = lw.weight_read_terms_min(w_bytes, lanes, bw, h, lat, per)
        m_w = lw.weight_read_time(m_min, m_max, model.mw_position)    # (n, H, L)
        reads[j] = m_w.min(axis=1) / np.broadcast_to(stall, n_mr.shape)[:, None]
    reads = np.where(((n_mr == 1) & (n_ps == 0))[None, :, None], 0.0, reads)
    per_layer = (compute + np.transpose(reads, (2, 0, 1))).min(axis=1)   # (L, n)
    low = per_layer.sum(axis=0) * np.array([c.epoch_samples or 1_000_000 for c in configs])
    return low * (1 - 1e-9)


def _solve_triple(pricer: Pricer, config: Config, exhaustive: bool, max_threads, bound=None,
                  checked=False):
    """(T_epoch used for ranking, evaluations, a zero-argument function giving the Estimate,
    the DPResult or None), or None when ``bound`` rules the triple out."""
    model, dnn, cluster = pricer.model, pricer.dnn, pricer.cluster
    if exhaustive:
        t, plan, count = best_plan(model, dnn, cluster, config, max_threads=max_threads)
        return t, count, lambda: model.evaluate(dnn, cluster, config, plan), None
    result = solve(pricer, config, max_threads=max_threads, bound=bound, _checked=checked)
    if result is None:
        return None
    if pricer.exact:
        return (result.epoch_time, result.n_states,
                functools.partial(estimate_plan, pricer, result), result)
    est = estimate_plan(pricer, result)  # re-price with the model's own cache model
    return est.epoch_time, result.n_states, lambda: est, result


def optimize(model: lw.LayerWise, dnn: DNN, cluster: Cluster, *, machines: int | None = None,
             top: int = 5, epoch_samples: int | None = None, max_threads: int | None = None,
             exhaustive: bool = False, progress=None,
             max_workers_per_replica: int | None = None, check_limit: bool = True):
    """The optimizer of Yan et al. 2015: the best (N_ps, N_mr, N_wr) and layer plans for ``dnn``.

    Returns an :class:`optimizer.results.SearchResult` whose candidates carry
    the model's estimate of each triple's best plan (``meta["layers"]``: per-layer
    partitions, threads, replicas and worker mapping); ``n_evaluated`` counts
    the (triple, layer state) pairs the program priced, or with
    ``exhaustive=True`` the state sequences the brute force of
    :mod:`optimizer.exhaustive` evaluated instead.  When the model's cache
    model is not per layer the program's plans are re-priced by the model
    itself and ranked by that (``meta["exact"]`` is then False).

    The ``top`` best triples are exact: triples are solved in increasing
    order of :func:`triple_bounds`, each first with a bound just above its
    own and never above the ``top``-th best T_epoch found so far (module
    docstring, rules 2-4 and 7); ``meta``
    counts the triples of the space (``"triples"``), those solved
    (``"solved"``) and those the bounds ruled out (``"pruned"``).  With
    ``exhaustive=True`` or a cache model that is not per layer every triple
    is solved in full.

    Model parallelism is limited to ``max_workers_per_replica`` workers per
    replica, by default the DNN's own ``max_workers_per_replica`` (Yan et al.
    2015, footnote 7: their DNNs allowed at most 4); pass ``machines`` to lift
    it.  ``meta["max_workers_per_replica"]`` records the limit and, with
    ``check_limit``, ``meta["limit_binding"]`` whether it bound the answer:
    the best configuration without it (solved too, ``meta["unlimited_best"]``)
    is faster.
    """
    machines = cluster.machines if machines is None else machines
    if machines < 1 or machines > cluster.machines:
        raise SpecError("machines", f"must be in 1..{cluster.machines}, got {machines}")
    if top < 1:
        raise SpecError("top", f"must be >= 1, got {top!r}")
    max_wr = _workers_limit(dnn, max_workers_per_replica, machines)
    start = time.perf_counter()
    pricer = Pricer(model, dnn, cluster)
    configs = [Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=epoch_samples)
               for n_ps, n_mr, n_wr in useful_triples(machines, max_wr)]
    if pricer.exact and not exhaustive:
        found, evaluated = _search_pruned(pricer, configs, top, max_threads, progress)
    else:
        found, evaluated = _search_all(pricer, configs, exhaustive, max_threads, progress)
    if progress is not None:
        progress(len(configs))
    found.sort(key=lambda item: item[:3])
    ranked = tuple(Candidate(config, make(), t) for t, _, _, config, make in found[:top])
    meta = {"exact": pricer.exact or exhaustive, "triples": len(configs), "solved": len(found),
            "pruned": len(configs) - len(found), "max_workers_per_replica": max_wr}
    if max_wr is not None and check_limit:
        unlimited = optimize(model, dnn, cluster, machines=machines, top=1,
                             epoch_samples=epoch_samples, max_threads=max_threads,
                             exhaustive=exhaustive, max_workers_per_replica=machines).best
        free_time = unlimited.estimate.epoch_time
        meta["limit_binding"] = bool(free_time < ranked[0].estimate.epoch_time * (1 - _SLACK))
        c = unlimited.config
        meta["unlimited_best"] = {"config": f"{c.n_workers}/{c.n_replicas}/{c.n_ps}",
                                  "epoch_time": free_time}
    seconds = time.perf_counter() - start
    return SearchResult(best=ranked[0], ranked=ranked, n_evaluated=evaluated, seconds=seconds,
                        objective="time", meta=meta)


def _search_all(pricer: Pricer, configs, exhaustive: bool, max_threads, progress):
    """Every configuration solved in full: (found, states priced), found as
    (T_epoch, machines, index, config, estimate maker)."""
    found, evaluated = [], 0
    for index, config in enumerate(configs):
        t, count, make, _ = _solve_triple(pricer, config, exhaustive, max_threads)
        if progress is not None:
            progress(index + 1)
        found.append((t, config.machines, index, config, make))
        evaluated += count
    return found, evaluated


#: Relative step of the trial bounds of :func:`_search_pruned` above a triple's lower bound
#: (speed only: any step gives the same answer).
_STEP = 0.002

#: Growth of that step with each failed trial of the same triple (speed only).
_GROWTH = 2.0

#: Relative step above a triple's key of the bound of its first, relaxed run (speed only).
_RELAXED_STEP = 0.1


def _search_pruned(pricer: Pricer, configs, top: int, max_threads, progress):
    """The configurations that can enter the top ``top``, solved exactly (rules 2, 2b, 6, 7, 9).

    Returns (found, states priced) as :func:`_search_all`; every configuration
    not found has an optimum above the ``top``-th best found.
    """
    order = _TripleOrder(pricer, configs, max_threads)
    known = {}                # index -> its optimum, once solved
    retry = []                # (key, -N_wr, index): the optimum exceeds key (a failed trial)
    failed = {}               # index -> its failed trials
    relaxed = {}              # index -> its value at the lower bounds, once known
    found, evaluated, settled = [], 0, 0
    lower = _Dominance(configs)   # lower bounds on the optima, shared by dominance (rules 6, 9)
    serverless_done = {}      # N_wr -> DPResult of (0, 1, N_wr), exact
    while (head := _take(order, retry)) is not None:
        key, index = head
        ranked_ub = sorted(known.values())
        limit = ranked_ub[top - 1] if len(ranked_ub) >= top else np.inf
        if key > limit * (1 + _SLACK):
            break  # rule 2: this triple and every later one (larger keys) cannot enter the top
        config = configs[index]
        serverless = config.n_ps == 0 and config.n_replicas == 1
        floor = lower.floor(index)
        if floor > key:  # rules 6, 9: dominated by a triple whose optimum is >= floor
            heapq.heappush(retry, (floor, -config.n_workers, index))
            continue
        same = [r for w, r in serverless_done.items() if w >= config.n_workers
                and max(p * rr for p, rr, _ in r.states) <= config.n_workers] if serverless else []
        trial = limit
        if same:  # rule 6: a sub-space holding the optimum of a larger one has that optimum
            result = dataclasses.replace(same[0], config=config, n_states=0)
            got = (result.epoch_time, 0, functools.partial(estimate_plan, pricer, result), result)
        elif index not in relaxed:  # rule 7: first the program at the lower bounds
            trial = min(limit, key * (1 + _RELAXED_STEP))
            value = relaxed_value(pricer, config, trial, max_threads=max_threads)
            if value is not None:
                relaxed[index] = value
                lower.raise_to(index, value)
                heapq.heappush(retry, (max(key, value), -config.n_workers, index))
                continue
            got = None
        else:
            following = _peek(order, retry)
            # rule 7: first a bound just above this triple's lower bound
            step = _STEP * _GROWTH ** failed.get(index, 0)
            trial = min(limit, max(key * (1 + step), -np.inf if following is None
                                   else following[0]))
            got = _solve_triple(pricer, config, False, max_threads, bound=trial, checked=True)
        if got is None:
            lower.raise_to(index, trial)  # rules 6, 9: its optimum exceeds the trial bound
            if trial < limit:  # its optimum exceeds the trial bound: try it again from there
                heapq.heappush(retry, (trial, -config.n_workers, index))
                if index in relaxed:
                    failed[index] = failed.get(index, 0) + 1
                continue
        settled += 1
        if progress is not None:
            progress(settled)
        if got is None:
            continue
        t, count, make, result = got
        if serverless and not same:
            serverless_done[config.n_workers] = result
        found.append((t, config.machines, int(index), config, make))
        known[int(index)] = min(t, known.get(int(index), np.inf))
        lower.raise_to(index, t)
        evaluated += count
    return found, evaluated


class _Dominance:
    """Lower bounds known on the optima of the configurations, and the floor each one
    inherits from those that dominate it (rules 6 and 9).

    Configuration k' dominates k when both are serverless with one replica, or both have
    servers and the same N_mr, and k' has at least k's workers and read lanes
    min(N_ps, N_wr): the optimum of k is then at least that of k'.
    """

    def __init__(self, configs):
        serverless = np.array([c.n_ps == 0 for c in configs], dtype=bool)
        self.workers = np.array([c.n_workers for c in configs], dtype=np.int64)
        self.lanes = np.where(serverless, 0, np.minimum(
            np.maximum([c.n_ps for c in configs], 1), self.workers)).astype(np.int64)
        group = np.where(serverless, 0, np.array([c.n_replicas for c in configs]))
        self.members = {}
        for g in np.unique(group):
            self.members[int(g)] = np.flatnonzero(group == g)
        self.group = group
        self.low = np.full(len(configs), -np.inf)

    def raise_to(self, k: int, value: float) -> None:
        """Record that the optimum of configuration ``k`` is at least ``value``."""
        self.low[k] = max(self.low[k], value)

    def floor(self, k: int) -> float:
        """The largest lower bound recorded on a configuration dominating ``k`` (itself
        included); -inf if none."""
        m = self.members[int(self.group[k])]
        mask = (self.workers[m] >= self.workers[k]) & (self.lanes[m] >= self.lanes[k])
        return float(self.low[m[mask]].max())


def _peek(order, retry):
    """(key, index) of the configuration :func:`_take` gives next, or None."""
    head = order.peek()
    if retry and (head is None or retry[0] < head):
        head = retry[0]
    return None if head is None else (head[0], head[2])


def _take(order, retry):
    """(key, index) of the configuration of least (key, -N_wr, index), removed from the
    triple order or from the heap of failed trials; None when both are empty."""
    head = order.peek()
    if retry and (head is None or retry[0] < head):
        key, _, index = heapq.heappop(retry)
        return key, index
    if head is None:
        return None
    order.pop()
    return head[0], head[2]


class _TripleOrder:
    """The configurations in increasing order of :func:`triple_bounds` (ties: more workers
    first, then the order of ``configs``), each bound computed only when needed (rule 2b).

    A heap keyed by (bound, computed?, -N_wr, index) starts with every configuration at
    its :func:`quick_triple_bounds` (a lower bound on its bound); an entry popped with a
    quick bound gets its :func:`triple_bounds` and goes back.  An entry popped with its
    bound computed has the least bound of all: every other entry's key is at most its
    bound, and a quick key equal to it comes out first.  So the configurations come out
    in the order of sorting by (bound, -N_wr, index), and the search stops (rule 2) before
    most bounds are ever computed.
    """

    def __init__(self, pricer: Pricer, configs, max_threads):
        self.pricer, self.configs, self.max_threads = pricer, configs, max_threads
        low = quick_triple_bounds(pricer, configs, max_threads=max_threads)
        self.heap = [(float(b), 0, -c.n_workers, k) for k, (b, c) in enumerate(zip(low, configs))]
        heapq.heapify(self.heap)
        self.bounds = {}

    def pop(self):
        """The next configuration (its index), removed from the order; None when none is left."""
        while self.heap:
            value, computed, neg_w, k = heapq.heappop(self.heap)
            if computed:
                return k
            bound = float(triple_bounds(self.pricer, [self.configs[k]],
                                        max_threads=self.max_threads)[0])
            self.bounds[k] = bound
            heapq.heappush(self.heap, (bound, 1, neg_w, k))
        return None

    def first(self, count: int) -> list:
        """The first ``count`` configurations, left in the order."""
        got = []
        while len(got) < count:
            k = self.pop()
            if k is None:
                break
            got.append(k)
        for k in got:
            heapq.heappush(self.heap, (self.bounds[k], 1, -self.configs[k].n_workers, k))
        return got

    def peek(self):
        """(bound, -N_wr, index) of the next configuration, left in the order; None at the end."""
        k = self.pop()
        if k is None:
            return None
        entry = (self.bounds[k], 1, -self.configs[k].n_workers, k)
        heapq.heappush(self.heap, entry)
        return entry[0], entry[2], entry[3]

    def bound(self, k: int) -> float:
        """:func:`triple_bounds` of configuration ``k`` (computed once it came out)."""
        return self.bounds[k]

    def __iter__(self):
        while (k := self.pop()) is not None:
            yield k


def _workers_limit(dnn: DNN, requested: int | None, machines: int) -> int | None:
    """The largest N_wr to search (None: every N_wr up to ``machines``)."""
    limit = model_parallelism_limit(dnn, requested)
    return None if limit is None or limit >= machines else limit
