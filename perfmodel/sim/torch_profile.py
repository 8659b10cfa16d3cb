"""Profile one PyTorch worker, layer by layer, into a :class:`~perfmodel.sim.trace.Trace`.

Li et al. 2022, Sec. 2.2.1 profiled one worker with its own tool and fed the
per-layer operations to the simulator; this module does the same for a
``torch.nn.Module``: it runs a few training steps (forward, loss, backward,
optimizer step) on the module's device, times every *layer* (leaf module, in
the order the forward pass calls them) with hooks, and builds the layer-level
trace of :func:`~perfmodel.sim.trace.from_layers` with one
:class:`~perfmodel.sim.trace.Step` per profiled step, so that the simulator
can sample them.  Profile one worker here, predict a cluster with
:func:`perfmodel.sim.simulate`.

How the times are attributed (``time.perf_counter``; CUDA is synchronized at
each timestamp when the module lives on a GPU):

* **forward**: a forward pre-hook and a forward hook on every leaf module
  time its call.  Work between leaf calls (functional ops in a parent's
  ``forward`` such as residual additions or ``torch.flatten``) is added to
  the *next* leaf's forward, and the loss to the last leaf's, so that the
  forward times of a step sum to the wall time of ``loss_fn(module(x))``.
  :attr:`TorchProfile.t_forward_inside` keeps the times inside the hooks only.
* **backward**: a tensor hook on each leaf's output fires when the autograd
  engine reaches that layer (its output gradient is ready, just before the
  layer's backward node runs).  The wall time of ``loss.backward()`` is cut
  at these instants; each segment goes to the layer whose hook opened it
  (the first segment, the loss's backward, to the first layer reached), so
  the backward times of a step sum to the wall time of the backward pass.
  Tensor hooks, unlike full module backward hooks, work with in-place
  operations (``ReLU(inplace=True)``).
* **update**: the wall time of ``optimizer.step()`` is the step's update
  time ``t_update`` (split over the layers in proportion to their bytes).
  ``optimizer.zero_grad`` is not timed.

Parameter bytes per layer are ``p.numel() * p.element_size()`` summed over
the layer's *trainable* parameters (``requires_grad``; frozen ones are never
pushed).  A parameter shared by several layers is counted once, at the first
layer (forward order) that owns it; parameters owned directly by a container
module go to the first leaf of that container the forward pass calls.  Leaf
modules the forward pass never calls are left out (their parameters get no
gradient).  A leaf called several times per step is one layer (at its first
call) with the summed times.

PyTorch is an optional dependency (the ``perfmodel[torch]`` extra); this
module imports without it and raises :class:`ImportError` naming the extra
when a function needs it.

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.2.1 (profiling one worker,
per-layer operations, several profiled steps sampled by the simulator) and
Sec. 4.1 (layer-level traces).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import SpecError
from .trace import Trace, from_layers

__all__ = ["TorchProfile", "profile_layers", "profile_module", "require_torch"]

_EXTRA_HINT = ("PyTorch is not installed: install the optional extra with "
               "`pip install 'perfmodel[torch]'` (or `pip install torch`)")


def require_torch():
    """Import and return :mod:`torch`, or raise :class:`ImportError` naming the extra.

    Raises
    ------
    ImportError
        When PyTorch is missing: ``pip install 'perfmodel[torch]'``.
    """
    try:
        import torch
    except ImportError as err:  # pragma: no cover - exercised only without torch
        raise ImportError(_EXTRA_HINT) from err
    return torch


@dataclass(frozen=True, eq=False)
class TorchProfile:
    """Per-layer measurements of a few training steps of one worker.

    Attributes
    ----------
    names : tuple of str
        Layer (leaf module) names, in forward order (``"0"``, ``"features.3"`` ...).
    kinds : tuple of str
        Class name of each layer (``"Conv2d"`` ...).
    layer_bytes : numpy.ndarray, B
        Trainable parameter bytes per layer, shape (L,).
    t_forward, t_backward : numpy.ndarray, s
        Per step and layer, shape (S, L), with the gaps attributed as the
        module docstring says (each row sums to the step's forward/backward wall time).
    t_forward_inside : numpy.ndarray, s
        Forward time inside each leaf's call only, shape (S, L).
    t_update : numpy.ndarray, s
        ``optimizer.step()`` per step, shape (S,).
    t_wall : numpy.ndarray, s
        Wall time of each step (forward + loss + backward + update), shape (S,).
    batch_size : int
        Samples per step.
    name : str
        Label of the profile.
    device : str
        Where the module ran (``"cpu"``, ``"cuda:0"``).
    notes : tuple of str
        How parameters were attributed when not plainly (container-owned,
        never-called leaves); copied into the trace's ``source``.
    """

    names: tuple
    kinds: tuple
    layer_bytes: np.ndarray
    t_forward: np.ndarray
    t_backward: np.ndarray
    t_forward_inside: np.ndarray
    t_update: np.ndarray
    t_wall: np.ndarray
    batch_size: int = 1
    name: str = ""
    device: str = "cpu"
    notes: tuple = field(default=())

    @property
    def steps(self) -> int:
        """Profiled steps S."""
        return int(self.t_forward.shape[0])

    def to_trace(self, overlap: bool = True, t_update=None, *, servers=None) -> Trace:
        """The layer-level trace of :func:`~perfmodel.sim.trace.from_layers`, a step per row.

        Parameters
        ----------
        overlap : bool
            Overlap communication with computation (see :func:`from_layers`).
        t_update : float, optional, s
            Update time per step on the servers, replacing the measured
            ``optimizer.step()`` times (the servers may be faster or slower
            than this worker).
        servers : array_like of int, optional
            Parameter server of each layer.

        Returns
        -------
        Trace
        """
        m = np.asarray(self.layer_bytes, dtype=float)
        if t_update is None:
            totals = np.asarray(self.t_update, dtype=float)
        else:
            if isinstance(t_update, bool) or not isinstance(t_update, (int, float, np.number)) \
                    or not math.isfinite(float(t_update)) or t_update < 0:
                raise SpecError("t_update", f"must be a finite number of seconds >= 0, "
                                            f"got {t_update!r}")
            totals = np.full(self.steps, float(t_update))
        if not (m > 0).any():
            raise SpecError("layer_bytes", "the module has no trainable parameters: nothing "
                                           "to communicate, so there is no trace to simulate")
        tu = totals[:, None] * (m / m.sum())[None, :]
        source = (f"perfmodel.sim.torch_profile: {self.steps} steps of one worker on "
                  f"{self.device}, per-leaf-module hooks (time.perf_counter)")
        if self.notes:
            source += "; " + "; ".join(self.notes)
        return from_layers(m, self.t_forward, self.t_backward, tu, overlap, servers=servers,
                           names=list(self.names), name=self.name, batch_size=self.batch_size,
                           source=source)


def _tensors(obj):
    """The tensors inside a (nested) output: tensor, tuple, list or dict."""
    torch = require_torch()
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


def _check_count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise SpecError(name, f"must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def profile_layers(module, example_input, loss_fn=None, *, steps: int = 5, warmup: int = 2,
                   optimizer=None, name: str = "", batch_size: int | None = None) -> TorchProfile:
    """Run training steps of ``module`` and measure every layer (see the module docstring).

    Parameters
    ----------
    module : torch.nn.Module
        The model; put it (and ``example_input``) on the device to profile first.
    example_input : torch.Tensor or tuple of torch.Tensor
        One batch; a tuple is unpacked into ``module(*example_input)``.
    loss_fn : callable, optional
        ``loss_fn(output) -> scalar tensor``; default: ``output.float().mean()``
        of the first output tensor (bind targets with a closure or
        :func:`functools.partial`).
    steps : int
        Profiled steps (>= 1): the rows of the result.
    warmup : int
        Untimed steps first (>= 0): allocator, caches, lazy initialization.
    optimizer : torch.optim.Optimizer, optional
        Default: ``torch.optim.SGD(module.parameters(), lr=0.0)``, which
        performs (and times) a full update without changing the weights.  A
        real optimizer changes the module's parameters.
    name : str
        Label; default: the module's class name.
    batch_size : int, optional
        Samples per step; default: the first dimension of the first input tensor.

    Returns
    -------
    TorchProfile

    Raises
    ------
    ImportError
        Without PyTorch (install ``perfmodel[torch]``).
    SpecError
        Naming the argument: not a module, bad counts, a loss that is not a
        scalar tensor requiring grad, no leaf module called.
    """
    torch = require_torch()
    if not isinstance(module, torch.nn.Module):
        raise SpecError("module", f"expected a torch.nn.Module, got {type(module).__name__}")
    steps = _check_count("steps", steps, 1)
    warmup = _check_count("warmup", warmup, 0)
    if loss_fn is not None and not callable(loss_fn):
        raise SpecError("loss_fn", f"must be callable, got {loss_fn!r}")
    if not isinstance(name, str):
        raise SpecError("name", f"must be a string, got {name!r}")
    inputs = example_input if isinstance(example_input, tuple) else (example_input,)
    if batch_size is None:
        first = next((x for x in _tensors(inputs)), None)
        batch_size = int(first.shape[0]) if first is not None and first.dim() >= 1 else 1
    batch_size = _check_count("batch_size", batch_size, 1)
    if optimizer is None:
        params = [p for p in module.parameters() if p.requires_grad]
        optimizer = torch.optim.SGD(params, lr=0.0) if params else None
    elif not isinstance(optimizer, torch.optim.Optimizer):
        raise SpecError("optimizer", f"expected a torch.optim.Optimizer, got "
                                     f"{type(optimizer).__name__}")

    first_param = next(module.parameters(), None)
    device = first_param.device if first_param is not None else torch.device("cpu")
    if device.type == "cuda":
        def now():
            torch.cuda.synchronize(device)
            return time.perf_counter()
    else:
        now = time.perf_counter

    leaves = [(n, m) for n, m in module.named_modules() if next(m.children(), None) is None]
    if not leaves:
        raise SpecError("module", "has no modules to profile")
    index_of = {id(m): i for i, (_, m) in enumerate(leaves)}

    # Per step: events appended by the hooks.
    state = {"fwd": [], "bwd": [], "order": [], "seen": set(), "record": False}

    def pre_hook(mod, args):
        state["fwd"].append((index_of[id(mod)], "start", now()))

    def post_hook(mod, args, output):
        i = index_of[id(mod)]
        state["fwd"].append((i, "end", now()))
        if i not in state["seen"]:
            state["seen"].add(i)
            state["order"].append(i)
        fired = [False]

        def tensor_hook(grad, i=i, fired=fired):
            if not fired[0]:            # a layer with several outputs opens one segment
                fired[0] = True
                state["bwd"].append((i, now()))
            return None

        for t in _tensors(output):
            if t.requires_grad and t.grad_fn is not None:
                t.register_hook(tensor_hook)

    handles = []
    try:
        for _, m in leaves:
            handles.append(m.register_forward_pre_hook(pre_hook))
            handles.append(m.register_forward_hook(post_hook))
        rows = []
        module.train()
        for s in range(warmup + steps):
            module.zero_grad(set_to_none=True)
            if optimizer is not None:
                optimizer.zero_grad(set_to_none=True)
            state["fwd"].clear()
            state["bwd"].clear()
            t0 = now()
            output = module(*inputs)
            if loss_fn is None:
                first = next((x for x in _tensors(output)), None)
                if first is None:
                    raise SpecError("loss_fn", "the module returned no tensor: pass a loss_fn")
                loss = first.float().mean()
            else:
                loss = loss_fn(output)
            t1 = now()
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
                raise SpecError("loss_fn", "must return a scalar tensor that requires grad, got "
                                           f"{type(loss).__name__}")
            loss.backward()
            t2 = now()
            if optimizer is not None:
                optimizer.step()
            t3 = now()
            if s >= warmup:
                rows.append((t0, t1, t2, t3, list(state["fwd"]), list(state["bwd"])))
            del output, loss
    finally:
        for h in handles:
            h.remove()
        module.zero_grad(set_to_none=True)

    order = state["order"]
    if not order:
        raise SpecError("module", "the forward pass called none of its leaf modules")
    col = {leaf: c for c, leaf in enumerate(order)}
    n = len(order)
    tf = np.zeros((steps, n))
    tfi = np.zeros((steps, n))
    tb = np.zeros((steps, n))
    tu = np.zeros(steps)
    wall = np.zeros(steps)
    notes = []
    for s, (t0, t1, t2, t3, fwd, bwd) in enumerate(rows):
        last_end = t0
        open_at: dict = {}
        depth: dict = {}
        last_col = None
        for leaf, kind, t in fwd:
            c = col.get(leaf)
            if c is None:        # a leaf first called in a later step than the first
                continue
            if kind == "start":
                depth[leaf] = depth.get(leaf, 0) + 1
                if depth[leaf] == 1:
                    open_at[leaf] = t
            else:
                depth[leaf] -= 1
                if depth[leaf] == 0:
                    tfi[s, c] += t - open_at[leaf]
                    tf[s, c] += t - last_end
                    last_end = t
                    last_col = c
        if last_col is not None:
            tf[s, last_col] += t1 - last_end          # the loss, after the last leaf
        events = sorted((t, leaf) for leaf, t in bwd if leaf in col)
        if events:
            cuts = [t1] + [t for t, _ in events[1:]] + [t2]
            for k, (_, leaf) in enumerate(events):
                tb[s, col[leaf]] += cuts[k + 1] - cuts[k]
        else:
            tb[s, col[order[-1]]] += t2 - t1
        tu[s] = t3 - t2
        wall[s] = t3 - t0

    # Parameter bytes: own trainable parameters per leaf, shared ones once.
    counted: set = set()
    layer_bytes = np.zeros(n)
    for c, leaf in enumerate(order):
        for p in leaves[leaf][1].parameters(recurse=False):
            if p.requires_grad and id(p) not in counted:
                counted.add(id(p))
                layer_bytes[c] += p.numel() * p.element_size()
    leaf_names = [leaves[leaf][0] for leaf in order]
    for cname, container in module.named_modules():
        if next(container.children(), None) is None:
            continue        # a leaf: counted above, or never called (left out)
        own = [p for p in container.parameters(recurse=False)
               if p.requires_grad and id(p) not in counted]
        if not own:
            continue
        prefix = f"{cname}." if cname else ""
        target = next((c for c, ln in enumerate(leaf_names) if ln.startswith(prefix)), 0)
        for p in own:
            counted.add(id(p))
            layer_bytes[target] += p.numel() * p.element_size()
        notes.append(f"parameters of {cname or 'the root module'} counted in layer "
                     f"{leaf_names[target]}")
    uncalled = [leaves[i][0] for i in range(len(leaves)) if i not in col
                and any(p.requires_grad for p in leaves[i][1].parameters())]
    if uncalled:
        notes.append(f"leaf modules never called left out: {', '.join(uncalled)}")

    return TorchProfile(
        names=tuple(n_ or "(root)" for n_ in leaf_names),
        kinds=tuple(type(leaves[leaf][1]).__name__ for leaf in order),
        layer_bytes=layer_bytes, t_forward=tf, t_backward=tb, t_forward_inside=tfi,
        t_update=tu, t_wall=wall, batch_size=batch_size,
        name=name or type(module).__name__, device=str(device), notes=tuple(notes))


def profile_module(module, example_input, loss_fn=None, *, steps: int = 5, warmup: int = 2,
                   optimizer=None, name: str = "", t_update=None, overlap: bool = True,
                   batch_size: int | None = None, servers=None) -> Trace:
    """Profile a few training steps of a ``torch.nn.Module`` into a layer-level Trace.

    Runs :func:`profile_layers` (see it and the module docstring for how
    forward, backward and update times are attributed to the layers) and
    builds :func:`~perfmodel.sim.trace.from_layers`'s trace with one step per
    profiled step.

    Parameters
    ----------
    module, example_input, loss_fn, steps, warmup, optimizer, name, batch_size
        See :func:`profile_layers`.
    t_update : float, optional, s
        Update time per step on the parameter servers; default: the measured
        ``optimizer.step()`` time of each step.
    overlap : bool
        Overlap communication with computation (:func:`from_layers`).
    servers : array_like of int, optional
        Parameter server of each layer.

    Returns
    -------
    Trace
        ``steps`` steps; layer names are the leaf modules' qualified names.

    Raises
    ------
    ImportError
        Without PyTorch: install the extra ``perfmodel[torch]``.
    SpecError
        Naming the argument (see :func:`profile_layers`); ``layer_bytes``
        when the module has no trainable parameter.

    Examples
    --------
    >>> import torch                                        # doctest: +SKIP
    >>> net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
    ...                           torch.nn.Linear(32, 10))  # doctest: +SKIP
    >>> trace = profile_module(net, torch.randn(16, 64), steps=5)  # doctest: +SKIP
    >>> len(trace.steps), trace.model_bytes                 # doctest: +SKIP
    (5, 9640.0)
    >>> simulate(trace, 4, 1.25e9, mode="sync").throughput  # doctest: +SKIP
    """
    prof = profile_layers(module, example_input, loss_fn, steps=steps, warmup=warmup,
                          optimizer=optimizer, name=name, batch_size=batch_size)
    return prof.to_trace(overlap, t_update, servers=servers)
