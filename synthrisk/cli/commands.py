"""Subcommands of the method families (rapid, mia, dp), of schemas and the audit; each registers itself here."""


def add_method_commands(sub) -> None:
    from ..data import cli as schema_cli
    from ..dp import cli as dp_cli
    from ..mia import cli as mia_cli
    from ..rapid import cli as rapid_cli
    from ..release_audit import cli as audit_cli

    for module in (rapid_cli, mia_cli, dp_cli, schema_cli, audit_cli):
        module.add_command(sub)
