"""Exceptions with messages meant for users (they name the file, column or key)."""


class SynthriskError(ValueError):
    """Base class: bad input that the user can fix."""


class SchemaError(SynthriskError):
    """A dataset schema file is invalid or does not match the data."""


class ConfigError(SynthriskError):
    """A workflow or command-line setting is invalid."""


class DataError(SynthriskError):
    """Data content that the method cannot work with."""


class DomainError(SchemaError):
    """A DP release needs public domain metadata (levels, bounds) that the schema does not declare."""
