"""Subcommands of the method families (rapid, mia, dp); each registers itself here."""


def add_method_commands(sub) -> None:
    for module in ():
        module.add_command(sub)
