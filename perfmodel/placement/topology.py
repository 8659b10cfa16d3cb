"""Datacenter topologies as networkx graphs, with ECMP routing (Jain, Kumar, Mao, Sec. 4.1).

A :class:`Topology` wraps an undirected :class:`networkx.Graph` whose nodes are
hosts (``kind="host"``, with the index ``rack`` of their top-of-rack switch) and
switches (``kind="tor"``, ``"top"``, ``"agg"``, ``"core"``), and whose edges are
full-duplex cables with a ``capacity`` (bytes/s, each direction) and a
``latency`` (s, one way).  Every cable gives two directed *arcs*, the resources
flows compete for; arcs are numbered once (:attr:`Topology.arcs`) and every
array of the package indexed by link uses that numbering.

Routes follow shortest paths (hop count).  Where several exist the flow is
split per hop, as ECMP does: a switch divides what it forwards equally among its
next hops towards the destination.  A route is therefore a vector of arc
*fractions* (1 on every arc of a unique path); the flow-level simulator uses it
as a fluid split (packet spraying), which is the long-run average of ECMP
hashing over many flows.  Hosts never forward traffic.

Presets
-------
* :func:`racks` -- racks of hosts under top-of-rack (ToR) switches, joined by one
  or more top switches; the oversubscription ratio is the hosts' bandwidth in a
  rack over the rack's uplink bandwidth.
* :func:`paper_racks` -- Jain, Kumar and Mao's 8 racks x 8 hosts, one top
  switch, every link 10 Gbps and 15 ns (Sec. 4.1, 4.4): oversubscription 8.
* :func:`fat_tree` -- the k-ary fat tree (k pods, full bisection bandwidth).
* :func:`star` -- hosts on one switch (the setting of the coarse model of
  Li et al. 2022).
* :func:`from_string` -- ``"racks:8x8"``, ``"racks:8x8@10Gbps"``,
  ``"fattree:4"``, ``"star:8"``, ``"paper"`` (CLI use).

Examples
--------
>>> topo = paper_racks()
>>> topo.n_hosts, topo.n_racks, topo.oversubscription
(64, 8, 8.0)
>>> arcs, frac = topo.route(0, 9)        # host 0 (rack 0) to host 9 (rack 1)
>>> [topo.arcs[a] for a in arcs]
[('h0', 'tor0'), ('tor0', 'top0'), ('top0', 'tor1'), ('tor1', 'h9')]
>>> arcs, frac = fat_tree(4).route(0, 15)   # 4 equal-cost paths across the core
>>> len(arcs), frac.tolist()[:7]
(14, [1.0, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25])

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training Performance
in Datacenters": Sec. 4.1 (rack topology, single top switch, ECMP over several
top switches) and Sec. 4.4 (8 racks x 8 servers, 10 Gbps, 15 ns).  Al-Fares,
Loukissas, Vahdat 2008, "A Scalable, Commodity Data Center Network
Architecture" (the paper's ref. [1]) for the k-ary fat tree.  Li, Paolieri,
Golubchik, Lin, Yan 2022, "Predicting Throughput of Distributed SGD" (the star
of its coarse model).
"""

from __future__ import annotations

import re
from collections import deque

import networkx as nx
import numpy as np

from .. import _validate as _v
from .. import units
from ..errors import SpecError

__all__ = ["Topology", "racks", "paper_racks", "fat_tree", "star", "from_string", "MAX_HOSTS",
           "PAPER_BANDWIDTH", "PAPER_LATENCY"]

#: Link bandwidth of Jain, Kumar and Mao's topology (Sec. 4.4): 10 Gbps, in bytes/s.
PAPER_BANDWIDTH = 10e9 / 8
#: Link latency of Jain, Kumar and Mao's topology (Sec. 4.4): 15 ns.
PAPER_LATENCY = 15e-9

_SWITCH_KINDS = ("tor", "top", "agg", "core", "switch")


class Topology:
    """A datacenter network: hosts, switches and full-duplex links.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected graph.  Host nodes carry ``kind="host"`` and ``rack`` (int,
        the rack, i.e. edge switch, they hang from); switch nodes carry a
        ``kind`` among ``"tor"``, ``"top"``, ``"agg"``, ``"core"``,
        ``"switch"``.  Every edge carries ``capacity`` (bytes/s per direction,
        > 0) and ``latency`` (s, >= 0).  ``graph.graph["oversubscription"]``
        is reported by :attr:`oversubscription` when set.
    name : str
        Label used in reports.

    Attributes
    ----------
    graph : networkx.Graph
        A frozen copy of the graph.
    hosts : tuple of str
        Host node names; a host's *index* in this tuple is how placements
        refer to it.
    rack_of : ndarray of int, shape (n_hosts,)
        Rack of each host.
    arcs : tuple of (str, str)
        Directed links, two per cable (``u -> v`` then ``v -> u``).
    capacity : ndarray, bytes/s, shape (n_arcs,)
    latency : ndarray, s, shape (n_arcs,)

    Raises
    ------
    SpecError
        A host without a rack, a bad capacity or latency, hosts that cannot
        reach one another.
    """

    def __init__(self, graph: nx.Graph, name: str = ""):
        if not isinstance(graph, nx.Graph) or graph.is_directed():
            raise SpecError("graph", f"expected an undirected networkx.Graph, got "
                                     f"{type(graph).__name__}")
        g = nx.freeze(graph.copy())
        hosts, rack_of = [], []
        for node, data in g.nodes(data=True):
            kind = data.get("kind")
            if kind == "host":
                rack = data.get("rack")
                if isinstance(rack, bool) or not isinstance(rack, (int, np.integer)) or rack < 0:
                    raise SpecError(f"graph.nodes[{node!r}].rack",
                                    f"a host needs a rack index >= 0, got {rack!r}")
                hosts.append(node)
                rack_of.append(int(rack))
            elif kind not in _SWITCH_KINDS:
                raise SpecError(f"graph.nodes[{node!r}].kind",
                                f"must be 'host' or one of {', '.join(_SWITCH_KINDS)}; "
                                f"got {kind!r}")
        if len(hosts) < 2:
            raise SpecError("graph", f"needs at least two hosts, got {len(hosts)}")
        arcs, cap, lat = [], [], []
        for u, v, data in g.edges(data=True):
            where = f"graph.edges[{u!r}, {v!r}]"
            c = _v.number(f"{where}.capacity", data.get("capacity"), "B/s", positive=True)
            d = _v.number(f"{where}.latency", data.get("latency", 0.0), "s", minimum=0.0)
            arcs += [(u, v), (v, u)]
            cap += [c, c]
            lat += [d, d]
        self.graph = g
        self.name = str(name)
        self.hosts = tuple(hosts)
        self.rack_of = np.array(rack_of, dtype=int)
        self.rack_of.setflags(write=False)
        self.arcs = tuple(arcs)
        self.capacity = np.array(cap, dtype=float)
        self.latency = np.array(lat, dtype=float)
        self.capacity.setflags(write=False)
        self.latency.setflags(write=False)
        self.arc_index = {arc: i for i, arc in enumerate(arcs)}
        self._host_index = {h: i for i, h in enumerate(hosts)}
        self._is_host = {n: d.get("kind") == "host" for n, d in g.nodes(data=True)}
        self._dist: dict = {}
        self._routes: dict = {}
        # every host must reach every other host without forwarding through hosts
        dist = self._distances(hosts[0])
        missing = [h for h in hosts if h not in dist]
        if missing:
            raise SpecError("graph", f"host {missing[0]!r} cannot reach host {hosts[0]!r}")

    # ------------------------------------------------------------ description
    @property
    def n_hosts(self) -> int:
        """Number of hosts."""
        return len(self.hosts)

    @property
    def n_arcs(self) -> int:
        """Number of directed links (twice the number of cables)."""
        return len(self.arcs)

    @property
    def n_racks(self) -> int:
        """Number of racks (distinct ``rack`` values of the hosts)."""
        return int(self.rack_of.max()) + 1

    @property
    def oversubscription(self) -> float | None:
        """Hosts' bandwidth of a rack over the rack's uplink bandwidth (None if unknown)."""
        value = self.graph.graph.get("oversubscription")
        return None if value is None else float(value)

    def rack_hosts(self, rack: int) -> np.ndarray:
        """Indices of the hosts in ``rack``, ascending."""
        return np.flatnonzero(self.rack_of == rack)

    def host_index(self, host) -> int:
        """Index of a host given by name or index; SpecError if it is not a host."""
        if isinstance(host, (int, np.integer)) and not isinstance(host, bool):
            if 0 <= host < self.n_hosts:
                return int(host)
            raise SpecError("host", f"index must be in [0, {self.n_hosts}), got {host}")
        if host in self._host_index:
            return self._host_index[host]
        raise SpecError("host", f"{host!r} is not a host of topology {self.name!r}")

    def uplink_arcs(self) -> np.ndarray:
        """Arcs between a ToR (edge) switch and the switches above it, both directions."""
        kinds = nx.get_node_attributes(self.graph, "kind")
        return np.array([i for i, (u, v) in enumerate(self.arcs)
                         if "host" not in (kinds[u], kinds[v])
                         and "tor" in (kinds[u], kinds[v])], dtype=int)

    def __repr__(self) -> str:
        over = self.oversubscription
        extra = f", oversubscription={over:g}" if over is not None else ""
        return (f"Topology({self.name!r}, hosts={self.n_hosts}, racks={self.n_racks}, "
                f"arcs={self.n_arcs}{extra})")

    # --------------------------------------------------------------- routing
    def _distances(self, dst) -> dict:
        """Hop count from every node to ``dst``, never forwarding through another host."""
        dist = self._dist.get(dst)
        if dist is not None:
            return dist
        dist = {dst: 0}
        queue = deque([dst])
        adj = self.graph.adj
        while queue:
            u = queue.popleft()
            if u != dst and self._is_host[u]:
                continue  # a host receives but does not forward
            for v in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        self._dist[dst] = dist
        return dist

    def route(self, src, dst) -> tuple[np.ndarray, np.ndarray]:
        """Arcs of the shortest paths from host ``src`` to host ``dst``, with ECMP fractions.

        Parameters
        ----------
        src, dst : int or str
            Host indices (or names).

        Returns
        -------
        arcs : ndarray of int
            Arc indices used, in path order (ascending hop distance from ``src``).
        fractions : ndarray of float
            Share of the flow crossing each arc: 1 on a unique path; split
            equally among next hops at every switch with several (ECMP).
            Fractions leaving any node sum to what entered it.

        Raises
        ------
        SpecError
            ``src`` or ``dst`` is not a host, or ``src == dst``.

        References
        ----------
        Jain, Kumar, Mao, Sec. 4.1: several top switches with ECMP distributing flows
        across the paths between racks.
        """
        s, d = self.host_index(src), self.host_index(dst)
        if s == d:
            raise SpecError("dst", f"a flow needs two different hosts, got {src!r} twice")
        key = (s, d)
        cached = self._routes.get(key)
        if cached is not None:
            return cached
        src_node, dst_node = self.hosts[s], self.hosts[d]
        dist = self._distances(dst_node)
        adj = self.graph.adj
        share = {src_node: 1.0}
        frontier = [src_node]
        out_arcs, out_frac = [], []
        while frontier:
            nxt: dict = {}
            for u in frontier:
                x = share.pop(u)
                if u == dst_node:
                    continue
                hops = [v for v in adj[u] if dist.get(v, -1) == dist[u] - 1
                        and (v == dst_node or not self._is_host[v])]
                part = x / len(hops)
                for v in sorted(hops, key=str):
                    out_arcs.append(self.arc_index[(u, v)])
                    out_frac.append(part)
                    nxt[v] = nxt.get(v, 0.0) + part
            share.update(nxt)
            frontier = sorted(nxt, key=str)
        arcs = np.array(out_arcs, dtype=int)
        frac = np.array(out_frac, dtype=float)
        arcs.setflags(write=False)
        frac.setflags(write=False)
        self._routes[key] = (arcs, frac)
        return arcs, frac

    def path_latency(self, src, dst) -> float:
        """One-way propagation latency of ``src -> dst`` (s): the ECMP-weighted path latency.

        All equal-cost paths of the presets have the same latency, so this is
        the latency of any of them.
        """
        arcs, frac = self.route(src, dst)
        return float(np.dot(frac, self.latency[arcs]))

    def incidence(self, pairs) -> np.ndarray:
        """Dense arc x flow matrix of ECMP fractions for a sequence of (src, dst) host pairs.

        Returns
        -------
        ndarray, shape (n_arcs, len(pairs))
            Entry (l, f) is the share of flow f crossing arc l.
        """
        pairs = list(pairs)
        out = np.zeros((self.n_arcs, len(pairs)))
        for f, (s, d) in enumerate(pairs):
            arcs, frac = self.route(s, d)
            out[arcs, f] += frac
        return out


# ------------------------------------------------------------------ presets

def racks(n_racks: int = 8, hosts_per_rack: int = 8, bandwidth=PAPER_BANDWIDTH,
          latency=PAPER_LATENCY, *, n_top: int = 1, uplink_bandwidth=None,
          oversubscription=None, name: str | None = None) -> Topology:
    """Racks of hosts under ToR switches, each ToR linked to every top switch.

    Parameters
    ----------
    n_racks : int
        Racks (>= 1).
    hosts_per_rack : int
        Hosts under each ToR switch (>= 1; at least 2 hosts in all).
    bandwidth : float or str, bytes/s
        Capacity of every host-ToR link, each direction ("10Gbps" accepted).
    latency : float or str, s
        One-way latency of every link.
    n_top : int
        Top switches (>= 1 when ``n_racks > 1``; 0 allowed for one rack).
        Several top switches give several equal-cost paths between racks,
        split by ECMP.
    uplink_bandwidth : float or str, bytes/s, optional
        Capacity of each ToR-top link.  Default: ``bandwidth`` (the paper).
    oversubscription : float, optional
        Instead of ``uplink_bandwidth``: hosts' bandwidth of a rack over its
        total uplink bandwidth, ``hosts_per_rack * bandwidth / (n_top *
        uplink_bandwidth)``.  Give at most one of the two.
    name : str, optional
        Label; default ``"racks:{n_racks}x{hosts_per_rack}"``.

    Returns
    -------
    Topology
        Hosts ``h0 ... h{N-1}`` rack by rack (host ``i`` is in rack ``i //
        hosts_per_rack``), switches ``tor{r}`` and ``top{t}``.

    Raises
    ------
    SpecError
        Naming the bad argument.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.1 (Fig. 2): hosts on a rack switch, rack switches on a
    top switch; with several top switches, ECMP over the paths between racks.
    """
    n_racks = _v.integer("n_racks", n_racks, minimum=1)
    hosts_per_rack = _v.integer("hosts_per_rack", hosts_per_rack, minimum=1)
    if n_racks * hosts_per_rack < 2:
        raise SpecError("hosts_per_rack", "a topology needs at least two hosts, got "
                                          f"{n_racks} x {hosts_per_rack}")
    bw = _v.number("bandwidth", bandwidth, "B/s", positive=True)
    lat = _v.number("latency", latency, "s", minimum=0.0)
    n_top = _v.integer("n_top", n_top, minimum=0)
    if n_top == 0 and n_racks > 1:
        raise SpecError("n_top", f"must be >= 1 to join {n_racks} racks, got 0")
    if uplink_bandwidth is not None and oversubscription is not None:
        raise SpecError("oversubscription", "give uplink_bandwidth or oversubscription, not both")
    if oversubscription is not None:
        over = _v.number("oversubscription", oversubscription, positive=True)
        up = hosts_per_rack * bw / (over * max(n_top, 1))
    else:
        up = bw if uplink_bandwidth is None else _v.number(
            "uplink_bandwidth", uplink_bandwidth, "B/s", positive=True)
        over = hosts_per_rack * bw / (n_top * up) if n_top else 1.0
    g = nx.Graph(oversubscription=over)
    for r in range(n_racks):
        g.add_node(f"tor{r}", kind="tor")
    for t in range(n_top):
        g.add_node(f"top{t}", kind="top")
    for r in range(n_racks):
        for i in range(hosts_per_rack):
            h = f"h{r * hosts_per_rack + i}"
            g.add_node(h, kind="host", rack=r)
            g.add_edge(h, f"tor{r}", capacity=bw, latency=lat)
    for r in range(n_racks):
        for t in range(n_top):
            g.add_edge(f"tor{r}", f"top{t}", capacity=up, latency=lat)
    # host nodes first, in index order (Topology.hosts follows node order)
    order = [f"h{i}" for i in range(n_racks * hosts_per_rack)]
    ordered = nx.Graph(**g.graph)
    ordered.add_nodes_from((n, g.nodes[n]) for n in order)
    ordered.add_nodes_from(g.nodes(data=True))
    ordered.add_edges_from(g.edges(data=True))
    return Topology(ordered, name or f"racks:{n_racks}x{hosts_per_rack}")


def paper_racks() -> Topology:
    """Jain, Kumar and Mao's topology: 8 racks x 8 hosts, one top switch, 10 Gbps, 15 ns links.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.1 (Fig. 2) and Sec. 4.4.

    Examples
    --------
    >>> t = paper_racks()
    >>> t.name, t.n_hosts, float(t.capacity.max()) == 1.25e9
    ('paper', 64, True)
    """
    topo = racks(8, 8, PAPER_BANDWIDTH, PAPER_LATENCY, n_top=1, name="paper")
    return topo


def star(n_hosts: int, bandwidth=PAPER_BANDWIDTH, latency=0.0) -> Topology:
    """``n_hosts`` hosts on one switch (one rack, no top switch).

    The setting of the coarse model of Li et al. 2022: every host has one link of
    ``bandwidth`` to a non-blocking switch.
    """
    n_hosts = _v.integer("n_hosts", n_hosts, minimum=2)
    return racks(1, n_hosts, bandwidth, latency, n_top=0, name=f"star:{n_hosts}")


def fat_tree(k: int = 4, bandwidth=PAPER_BANDWIDTH, latency=PAPER_LATENCY) -> Topology:
    """The k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores.

    Parameters
    ----------
    k : int
        Even port count (>= 2); ``k**3 / 4`` hosts, ``k/2`` per edge switch.
    bandwidth : float or str, bytes/s
        Capacity of every link.
    latency : float or str, s
        One-way latency of every link.

    Returns
    -------
    Topology
        Racks are the edge switches (``tor{p*k/2+e}``, kind ``"tor"``); host
        ``i`` is in rack ``i // (k/2)``.  Oversubscription 1 (full bisection
        bandwidth); paths between pods are split by ECMP over ``(k/2)**2``
        cores.

    Raises
    ------
    SpecError
        ``k`` odd or < 2.

    References
    ----------
    Al-Fares, Loukissas, Vahdat 2008; Jain, Kumar, Mao, Sec. 4.1 ("real
    datacenter topologies are often structured as a fat tree").
    """
    k = _v.integer("k", k, minimum=2)
    if k % 2:
        raise SpecError("k", f"a k-ary fat tree needs an even k, got {k}")
    bw = _v.number("bandwidth", bandwidth, "B/s", positive=True)
    lat = _v.number("latency", latency, "s", minimum=0.0)
    half = k // 2
    g = nx.Graph(oversubscription=1.0)
    n_edge = k * half
    for i in range(n_edge * half):
        g.add_node(f"h{i}", kind="host", rack=i // half)
    for p in range(k):
        for e in range(half):
            g.add_node(f"tor{p * half + e}", kind="tor")
        for a in range(half):
            g.add_node(f"agg{p * half + a}", kind="agg")
    for c in range(half * half):
        g.add_node(f"core{c}", kind="core")
    for i in range(n_edge * half):
        g.add_edge(f"h{i}", f"tor{i // half}", capacity=bw, latency=lat)
    for p in range(k):
        for e in range(half):
            for a in range(half):
                g.add_edge(f"tor{p * half + e}", f"agg{p * half + a}", capacity=bw, latency=lat)
        for a in range(half):
            for c in range(half):
                g.add_edge(f"agg{p * half + a}", f"core{a * half + c}", capacity=bw, latency=lat)
    return Topology(g, f"fattree:{k}")


_RACKS = re.compile(r"^racks:(\d+)x(\d+)(?:@(.+))?$")


#: Most hosts a topology string may build (the flow simulator keeps a path per pair).
MAX_HOSTS = 65_536


def _sized(digits: str, spec: str) -> int:
    if len(digits) > 9:
        raise SpecError("topology", f"{units.shown(spec)}: {digits[:12]}... is too large")
    return int(digits)


def _check_hosts(n_hosts: int, spec: str) -> None:
    if n_hosts > MAX_HOSTS:
        raise SpecError("topology", f"{units.shown(spec)} has {n_hosts:,} hosts; at most "
                                    f"{MAX_HOSTS:,}")


def _rate(text: str | None, default: float) -> float:
    """The ``@BW`` of a topology string (a unit required), else ``default``."""
    if text is None:
        return default
    try:
        return units.parse(text, "B/s", require_unit=True)
    except SpecError as err:
        raise err.within("topology") from None


def from_string(spec: str, bandwidth=PAPER_BANDWIDTH) -> Topology:
    """A preset from a short string (the CLI's ``--topology``).

    ``"paper"`` (Jain, Kumar and Mao's 8x8), ``"racks:RxH"`` or ``"racks:RxH@10Gbps"``,
    ``"fattree:K"`` or ``"fattree:K@10Gbps"``, ``"star:N"`` or ``"star:N@10Gbps"``.
    Without ``@BW`` every link has ``bandwidth`` (bytes/s; default 10 Gbps);
    ``"paper"`` is always the paper's 10 Gbps.

    Examples
    --------
    >>> from_string("racks:4x2@1Gbps").capacity[0]
    np.float64(125000000.0)
    """
    if not isinstance(spec, str):
        raise SpecError("topology", f"expected a string such as 'racks:8x8', got {spec!r}")
    text = spec.strip()
    if text == "paper":
        return paper_racks()
    default = _v.number("bandwidth", bandwidth, "B/s", positive=True)
    m = _RACKS.match(text)
    if m:
        n_racks, per_rack = _sized(m.group(1), spec), _sized(m.group(2), spec)
        _check_hosts(n_racks * per_rack, spec)
        return racks(n_racks, per_rack, _rate(m.group(3), default))
    m = re.match(r"^(fattree|star):(\d+)(?:@(.+))?$", text)
    if m:
        k = _sized(m.group(2), spec)
        _check_hosts(k ** 3 // 4 if m.group(1) == "fattree" else k, spec)
        if m.group(1) == "fattree":
            return fat_tree(k, _rate(m.group(3), default))
        return star(k, _rate(m.group(3), default))
    raise SpecError("topology", f"unknown topology {spec!r}; expected 'paper', 'racks:RxH[@BW]', "
                                "'fattree:K[@BW]' or 'star:N[@BW]'")
