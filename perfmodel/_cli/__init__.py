"""The commands of ``perfmodel``, one module each with ``run(args) -> str``; see
:mod:`perfmodel.cli`, which imports a command's module when the command runs."""
