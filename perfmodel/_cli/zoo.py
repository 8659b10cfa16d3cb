"""`perfmodel zoo`: list, show and export the built-in specs and the file schemas."""

from __future__ import annotations

from .. import io, zoo
from .common import CliError, json_text, table_text

__all__ = ["run"]


# ---------------------------------------------------------------- commands
def run(args) -> str:
    if args.action == "list":
        data = {"dnns": zoo.names(), "profiles": zoo.profile_names(),
                "traces": zoo.pipedream_names(), "clusters": zoo.cluster_names()}
        if args.format == "json":
            return json_text(data)
        return "".join(f"{kind}:\n" + "".join(f"  {n}\n" for n in names)
                       for kind, names in data.items())
    if args.action == "schema":
        if args.out:
            paths = io.write_schemas(args.out)
            return "".join(f"{p}\n" for p in paths)
        return json_text(io.json_schemas())
    if not args.name:
        raise CliError("zoo show: NAME is required (see `perfmodel zoo list`)")
    name = args.name[4:] if args.name.startswith("zoo:") else args.name
    if name in zoo.names():
        dnn = zoo.load(name)
        if args.format == "json":
            return json_text(dnn.to_dict())
        head = (f"{dnn.name}: {len(dnn.layers)} layers, {dnn.n_params:,} parameters, "
                f"{dnn.n_connections:,} connections, {dnn.flops / 1e9:.3f} GFLOP forward per sample\n"
                f"source: {dnn.source}\n")
        rows = [{"layer": l.name, "kind": l.kind, "out_shape": "x".join(map(str, l.out_shape)),
                 "weights": l.weights, "connections": l.connections} for l in dnn.layers]
        return head + table_text(rows, ["layer", "kind", "out_shape", "weights", "connections"])
    for getter, names in ((zoo.profile, zoo.profile_names()),
                          (zoo.cluster, zoo.cluster_names())):
        if name in names:
            spec = getter(name)
            if args.format == "json":
                return json_text(spec.to_dict())
            return "".join(f"{k}: {v}\n" for k, v in spec.to_dict().items())
    raise CliError(f"zoo show: no DNN, profile or cluster called {name!r} (see `perfmodel zoo list`)")
