"""Packet-level engine: the same scenario simulated with real TCP in ns-3 (Jain, Kumar, Mao).

Optional: needs the ``ns3`` package from PyPI (the extra ``perfmodel[ns3]``),
whose ``ns`` module exposes ns-3 through cppyy.  Importing this module never
fails; :func:`simulate_ns3` raises :class:`ImportError` with the install hint
when ns-3 is absent, and :func:`available` tells beforehand.

What runs is ns-3 itself: the topology's nodes become ns-3 nodes, every cable a
full-duplex ``PointToPoint`` link of the same rate and delay, every switch an
IPv4 router with global (shortest-path) routing, random per-packet ECMP where
several equal-cost paths exist.  The parameter servers and workers are small
C++ applications compiled in-process by cppyy (about 200 lines, below), which
follow Jain, Kumar and Mao's Sec. 4.2 exactly as
:mod:`~perfmodel.placement.flowsim` does:
the PS sends a model block to each worker over a persistent TCP connection;
each worker, once it has the whole block, waits its sampled compute time and
sends its gradients over its own TCP connection; the PS, once it has every
worker's gradients, waits its sampled update time; repeat.  The compute times
are the *same* draws as the flow-level engine (same seed, same per-job
streams), so the two engines differ only in the network model.
:func:`runtime` loads ns-3 and compiles that code once per process;
:mod:`~perfmodel.placement.ns3_job` builds its own applications on it.

Scaling (Jain, Kumar, Mao, Sec. 4.4): packet-level simulation of 97.49 MB blocks is
slow, so sizes and link rates are both divided by ``scale`` (default 1000, the
paper's factor: 97.49 KB over 10 Mbps links).  The fluid transfer time
``bytes / rate`` is unchanged; compute times are not scaled.  What the scaling
does change is TCP's share of the transfer: a 97.49 KB block is 68 segments
of 1448 bytes, so slow start, headers (54 of every 1502 bytes on the wire)
and ACKs weigh more than at full size; the flow-level engine ignores them.

Notes
-----
Defaults chosen here (not in the paper): TCP NewReno (ns-3's default
congestion control since 3.x is Cubic; NewReno is set explicitly for
stability across versions), 1448-byte segments, ns-3's default socket
buffers (128 KiB) and queue discipline on every device.  The paper used
CSMA links with bridges as rack switches; we use point-to-point links and
routers (full duplex, as the flow-level model assumes).

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training Performance
in Datacenters": Sec. 4 (ns-3 topology, applications, scaling by 1000), Sec. 4.2
steps (1)-(5).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import sys
import tempfile
import time as _time

import numpy as np

from .. import _validate as _v
from ..errors import SpecError
from .flowsim import RESNET50_BYTES, FlowSimResult, scenario_arguments
from .strategies import Placement
from .topology import Topology

__all__ = ["available", "runtime", "simulate_ns3", "cling_noise_filtered", "INSTALL_HINT",
           "DEFAULT_SCALE", "CLING_NOISE"]

#: Message of the ImportError raised when ns-3 is missing.
INSTALL_HINT = ("the packet-level engine needs ns-3: pip install 'perfmodel[ns3]' "
                "(the 'ns3' package from PyPI)")
#: Jain, Kumar, Mao (Sec. 4.4) divide sizes and link rates by 1000.
DEFAULT_SCALE = 1000.0

_STATE: dict = {}

_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include <map>
#include <vector>
#include <algorithm>

namespace perfmodel_ns3 {
using namespace ns3;

// Socket plumbing shared with ns3_job.py's JobRunner (compiled once, here).
// Hand the socket as many bytes as its buffer takes, 64 KiB at a time.
inline void FillSocket(Ptr<Socket> tx, uint64_t& pending) {
  while (pending > 0) {
    uint32_t room = tx->GetTxAvailable();
    if (room == 0) return;
    uint32_t n = (uint32_t)std::min<uint64_t>(std::min<uint64_t>(pending, room), 65536);
    int sent = tx->Send(Create<Packet>(n));
    if (sent <= 0) return;
    pending -= (uint64_t)sent;
  }
}
// Index of the flow whose sending socket is s, or -1.
template <class F> int FlowOfSocket(const std::vector<F>& flows, Ptr<Socket> s) {
  for (size_t f = 0; f < flows.size(); ++f) if (flows[f].tx == s) return (int)f;
  return -1;
}
// The flow an accepted socket belongs to: it listens on port 10000 + flow index.
inline int AcceptedFlow(Ptr<Socket> s) {
  Address local; s->GetSockName(local);
  return (int)InetSocketAddress::ConvertFrom(local).GetPort() - 10000;
}

// Jain, Kumar, Mao, Sec. 4.2: PS -> workers (model), compute, workers -> PS (gradients), update.
class Runner {
 public:
  // topology
  int nNodes = 0;
  std::vector<int> linkU, linkV;
  std::vector<double> linkRate, linkDelay;   // bit/s, s
  // jobs: flat worker slots
  std::vector<int> psHost, slotJob, slotHost, jobFirst;  // jobFirst has nJobs + 1 entries
  double modelBytes = 0, gradBytes = 0;
  std::vector<double> wSamples, sSamples;    // [job][iter][slot] and [job][iter], wrapped
  int samplesPerJob = 1;
  int iterations = 1, warmup = 0;
  double startTime = 0.05, stopTime = 1e6;
  uint32_t segmentSize = 1448;
  bool ecmp = true;
  // results [job][recorded iteration]
  std::vector<double> latency, down, comp, up, upd;

  void Run();

 private:
  struct Flow {
    Ptr<Socket> tx;
    uint64_t pending = 0;
    uint64_t size = 0;
    uint64_t rx = 0;
    int slot = 0;
    bool isUp = false;
    Address peer;
  };
  std::vector<Flow> flows;                   // [0, n): down flows; [n, 2n): up flows
  std::map<Socket*, int> rxFlow;
  std::vector<Ptr<Socket>> keep;
  int nSlots = 0, nJobs = 0;
  std::vector<int> iter, arrived, recorded, critical;
  std::vector<double> tStart, tDown, tComp, tLast, cNow, uNow;

  double WorkerSample(int j, int it, int slot) {
    int nw = jobFirst[j + 1] - jobFirst[j];
    int k = it % samplesPerJob;
    return wSamples[(size_t)jobFirst[j] * samplesPerJob + (size_t)k * nw + slot];
  }
  double ServerSample(int j, int it) { return sSamples[(size_t)j * samplesPerJob + it % samplesPerJob]; }

  void Fill(int f) { FillSocket(flows[f].tx, flows[f].pending); }
  void Connect(int f) {
    Flow& fl = flows[f];
    fl.tx->Bind();
    fl.tx->Connect(fl.peer);
    fl.tx->SetSendCallback(MakeCallback(&Runner::OnSendable, this));
  }
  void OnSendable(Ptr<Socket> s, uint32_t) {
    int f = FlowOfSocket(flows, s);
    if (f >= 0) Fill(f);
  }
  void OnAccept(Ptr<Socket> s, const Address&) {
    rxFlow[PeekPointer(s)] = AcceptedFlow(s);
    keep.push_back(s);
    s->SetRecvCallback(MakeCallback(&Runner::OnRecv, this));
  }
  bool OnConnRequest(Ptr<Socket>, const Address&) { return true; }
  void OnRecv(Ptr<Socket> s) {
    int f = rxFlow[PeekPointer(s)];
    Flow& fl = flows[f];
    Ptr<Packet> p;
    while ((p = s->Recv())) {
      uint64_t before = fl.rx;
      fl.rx += p->GetSize();
      uint64_t done = fl.rx / fl.size - before / fl.size;
      for (uint64_t i = 0; i < done; ++i) Delivered(f);
    }
  }
  void StartIteration(int j) {
    tStart[j] = Simulator::Now().GetSeconds();
    arrived[j] = 0;
    uNow[j] = ServerSample(j, iter[j]);
    for (int s = jobFirst[j]; s < jobFirst[j + 1]; ++s) {
      cNow[s] = WorkerSample(j, iter[j], s - jobFirst[j]);
      flows[s].pending += flows[s].size;
      Fill(s);
    }
  }
  void Delivered(int f) {
    double now = Simulator::Now().GetSeconds();
    if (f < nSlots) {
      int s = f;
      tDown[s] = now;
      Simulator::Schedule(Seconds(cNow[s]), &Runner::ComputeDone, this, s);
    } else {
      int s = f - nSlots, j = slotJob[s];
      arrived[j] += 1;
      if (arrived[j] == jobFirst[j + 1] - jobFirst[j]) {
        critical[j] = s;
        tLast[j] = now;
        Simulator::Schedule(Seconds(uNow[j]), &Runner::UpdateDone, this, j);
      }
    }
  }
  void ComputeDone(int s) {
    tComp[s] = Simulator::Now().GetSeconds();
    int f = nSlots + s;
    flows[f].pending += flows[f].size;
    Fill(f);
  }
  void UpdateDone(int j) {
    int k = iter[j] - warmup;
    if (k >= 0 && k < iterations) {
      int s = critical[j];
      size_t at = (size_t)j * iterations + k;
      down[at] = tDown[s] - tStart[j];
      comp[at] = cNow[s];
      up[at] = tLast[j] - tComp[s];
      upd[at] = uNow[j];
      latency[at] = down[at] + comp[at] + up[at] + upd[at];
      recorded[j] += 1;
      if (*std::min_element(recorded.begin(), recorded.end()) >= iterations) {
        Simulator::Stop();
        return;
      }
    }
    iter[j] += 1;
    StartIteration(j);
  }
};

void Runner::Run() {
  nSlots = (int)slotJob.size();
  nJobs = (int)psHost.size();
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
  Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(ecmp));
  NodeContainer nodes;
  nodes.Create(nNodes);
  InternetStackHelper stack;
  stack.Install(nodes);
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");
  std::vector<Ipv4Address> hostAddr(nNodes);
  std::vector<bool> hasAddr(nNodes, false);
  for (size_t e = 0; e < linkU.size(); ++e) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)std::llround(linkRate[e]))));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(linkDelay[e])));
    NetDeviceContainer d = p2p.Install(nodes.Get(linkU[e]), nodes.Get(linkV[e]));
    Ipv4InterfaceContainer ifs = addr.Assign(d);
    addr.NewNetwork();
    if (!hasAddr[linkU[e]]) { hostAddr[linkU[e]] = ifs.GetAddress(0); hasAddr[linkU[e]] = true; }
    if (!hasAddr[linkV[e]]) { hostAddr[linkV[e]] = ifs.GetAddress(1); hasAddr[linkV[e]] = true; }
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  flows.assign(2 * nSlots, Flow());
  for (int f = 0; f < 2 * nSlots; ++f) {
    int s = f % nSlots, j = slotJob[s];
    bool isUp = f >= nSlots;
    int src = isUp ? slotHost[s] : psHost[j];
    int dst = isUp ? psHost[j] : slotHost[s];
    uint16_t port = (uint16_t)(10000 + f);
    Ptr<Socket> listener = Socket::CreateSocket(nodes.Get(dst), TcpSocketFactory::GetTypeId());
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    listener->Listen();
    listener->SetAcceptCallback(MakeCallback(&Runner::OnConnRequest, this),
                                MakeCallback(&Runner::OnAccept, this));
    keep.push_back(listener);
    Ptr<Socket> tx = Socket::CreateSocket(nodes.Get(src), TcpSocketFactory::GetTypeId());
    flows[f].tx = tx;
    flows[f].peer = InetSocketAddress(hostAddr[dst], port);
    Simulator::Schedule(Seconds(0.0), &Runner::Connect, this, f);
    flows[f].size = (uint64_t)std::llround(isUp ? gradBytes : modelBytes);
    flows[f].slot = s;
    flows[f].isUp = isUp;
  }
  iter.assign(nJobs, 0); arrived.assign(nJobs, 0); recorded.assign(nJobs, 0);
  critical.assign(nJobs, 0); tStart.assign(nJobs, 0); tLast.assign(nJobs, 0);
  uNow.assign(nJobs, 0); tDown.assign(nSlots, 0); tComp.assign(nSlots, 0); cNow.assign(nSlots, 0);
  latency.assign((size_t)nJobs * iterations, 0); down = latency; comp = latency; up = latency;
  upd = latency;
  for (int j = 0; j < nJobs; ++j)
    Simulator::Schedule(Seconds(startTime), &Runner::StartIteration, this, j);
  Simulator::Stop(Seconds(stopTime));
  Simulator::Run();
  Simulator::Destroy();
  flows.clear(); rxFlow.clear(); keep.clear();
}

}  // namespace perfmodel_ns3
"""


def available() -> bool:
    """True when the ``ns3`` package (module ``ns``) can be imported; does not import it."""
    return importlib.util.find_spec("ns") is not None


def runtime():
    """cppyy with ns-3 loaded and this module's C++ compiled (once per process).

    The compiled code holds the parameter-server applications and the socket
    helpers that :mod:`~perfmodel.placement.ns3_job` builds on.

    Raises
    ------
    ImportError
        ns-3 (``pip install 'perfmodel[ns3]'``) is not installed or does not load.
    """
    if "cppyy" in _STATE:
        return _STATE["cppyy"]
    if not available():
        raise ImportError(INSTALL_HINT)
    with cling_noise_filtered():
        try:
            import cppyy
            from ns import ns  # noqa: F401  (loads the ns-3 libraries into cppyy)
        except Exception as err:  # pragma: no cover - a broken install
            raise ImportError(f"{INSTALL_HINT}; importing it failed: {err}") from err
        cppyy.cppdef(_CPP)
    _STATE["cppyy"] = cppyy
    return cppyy


#: Lines cling (cppyy's C++ interpreter) writes to stderr while ns-3's libraries load,
#: about static initializers it runs later itself; the simulation is unaffected.
CLING_NOISE = ("Failed to materialize symbols",)


@contextlib.contextmanager
def cling_noise_filtered():
    """Hold back :data:`CLING_NOISE` lines that C++ code writes to file descriptor 2.

    cling writes from C++, below Python's ``sys.stderr``, so the descriptor
    itself is pointed at a temporary file for the duration; every other line
    is written to stderr afterwards, in order.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            for line in held.read().decode("utf-8", "replace").splitlines(keepends=True):
                if not any(noise in line for noise in CLING_NOISE):
                    sys.stderr.write(line)


def simulate_ns3(topology: Topology, placement: Placement, model_bytes=RESNET50_BYTES,
                 worker_compute=None, server_compute=None, *, iterations: int = 20,
                 warmup: int = 2, seed=0, gradient_bytes=None, scale: float = DEFAULT_SCALE,
                 segment_size: int = 1448, ecmp: bool = True,
                 stop_time: float = 1e5) -> FlowSimResult:
    """Run the placement scenario in ns-3 with TCP (the packet-level cross-check).

    Parameters
    ----------
    topology, placement, model_bytes, worker_compute, server_compute, iterations, warmup, seed, gradient_bytes
        As for :func:`perfmodel.placement.flowsim.simulate`; the same seed
        gives the same compute-time draws as the flow-level engine.
    scale : float
        Sizes and link rates are divided by ``scale`` (Jain, Kumar, Mao, Sec. 4.4:
        1000); latencies and compute times are not.  Reported latencies are
        the simulated ones (transfer times are scale-free to first order).
    segment_size : int, bytes
        TCP maximum segment size.
    ecmp : bool
        Per-packet random ECMP in ns-3's global routing where paths tie.
    stop_time : float, s
        Simulated-time safety stop.

    Returns
    -------
    FlowSimResult
        ``meta["engine"] == "ns3"``, ``meta["scale"]``; phases along the
        critical path as in the flow-level engine.

    Raises
    ------
    ImportError
        ns-3 (``pip install 'perfmodel[ns3]'``) is not installed.
    SpecError
        Naming a bad argument.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.1-4.4.
    """
    m_down, m_up, wdist, sdist, iterations, warmup = scenario_arguments(
        topology, placement, model_bytes, gradient_bytes, worker_compute, server_compute,
        iterations, warmup)
    scale = _v.number("scale", scale, positive=True)
    segment_size = _v.integer("segment_size", segment_size, minimum=64)
    stop_time = _v.number("stop_time", stop_time, "s", positive=True)
    if not isinstance(ecmp, bool):
        raise SpecError("ecmp", f"expected True or False, got {ecmp!r}")
    if m_down / scale < 1 or m_up / scale < 1:
        raise SpecError("scale", f"leaves less than one byte per transfer ({m_down / scale!r})")
    streams = [np.random.default_rng(s)
               for s in _v.seed_sequence(seed).spawn(placement.n_jobs)]
    # the same draws, in the same order, as the flow-level engine's; jobs that run
    # ahead of the slowest reuse their draws cyclically past `per_job` iterations
    per_job = 3 * (iterations + warmup) + 10
    w_samples, s_samples = [], []
    for j, rng in enumerate(streams):
        nw = len(placement.workers[j])
        for _ in range(per_job):
            w_samples.append(wdist.sample(rng, nw))
            s_samples.append(float(sdist.sample(rng, 1)[0]))
    cppyy = runtime()
    std = cppyy.gbl.std
    r = cppyy.gbl.perfmodel_ns3.Runner()
    nodes = list(topology.graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    r.nNodes = len(nodes)
    for u, v, data in topology.graph.edges(data=True):
        r.linkU.push_back(index[u])
        r.linkV.push_back(index[v])
        r.linkRate.push_back(float(data["capacity"]) * 8.0 / scale)
        r.linkDelay.push_back(float(data.get("latency", 0.0)))
    host_node = [index[h] for h in topology.hosts]
    for ps in placement.ps:
        r.psHost.push_back(host_node[ps])
    first = [0]
    for j, group in enumerate(placement.workers):
        for h in group:
            r.slotJob.push_back(j)
            r.slotHost.push_back(host_node[h])
        first.append(first[-1] + len(group))
    for x in first:
        r.jobFirst.push_back(x)
    r.modelBytes = m_down / scale
    r.gradBytes = m_up / scale
    r.wSamples = std.vector["double"]([float(x) for a in w_samples for x in a])
    r.sSamples = std.vector["double"](s_samples)
    r.samplesPerJob = per_job
    r.iterations = iterations
    r.warmup = warmup
    r.segmentSize = segment_size
    r.ecmp = ecmp
    r.stopTime = stop_time
    start = _time.perf_counter()
    r.Run()
    wall = _time.perf_counter() - start
    shape = (placement.n_jobs, iterations)
    latency = np.array(list(r.latency)).reshape(shape)
    phases = {"downlink": np.array(list(r.down)).reshape(shape),
              "compute": np.array(list(r.comp)).reshape(shape),
              "uplink": np.array(list(r.up)).reshape(shape),
              "update": np.array(list(r.upd)).reshape(shape)}
    if not np.all(latency > 0):
        raise RuntimeError(f"ns-3 stopped at stop_time={stop_time} s before every job "
                           f"recorded {iterations} iterations")
    meta = {"engine": "ns3", "scale": scale, "topology": topology.name,
            "jobs": placement.n_jobs, "model_bytes": m_down, "gradient_bytes": m_up,
            "worker_compute": repr(wdist), "server_compute": repr(sdist),
            "iterations": iterations, "warmup": warmup, "segment_size": segment_size,
            "tcp": "NewReno"}
    return FlowSimResult(latency, phases, placement.strategy, math.nan, wall, 0, 0, meta)
