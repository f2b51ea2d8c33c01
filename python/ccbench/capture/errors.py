"""The error every capture module raises (export, import and the reader's wrapper)."""


class CaptureError(ValueError):
    """A capture cannot be written or read as asked (message names the fix)."""
