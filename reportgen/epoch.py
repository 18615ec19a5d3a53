"""SOURCE_DATE_EPOCH (reproducible builds): the moment a report's page says it was made."""

from __future__ import annotations

import os

from .errors import InputError

LATEST = 253_402_300_799  # 9999-12-31 23:59:59 UTC: the last moment a date of four digits names


def source_date_epoch() -> str | None:
    """$SOURCE_DATE_EPOCH, or None when unset; InputError for a value that is no count of
    seconds since 1970. Checked before scipy is imported: numpy parses it while scipy imports
    (numpy.f2py), so 'abc' or '1e9' ended in a traceback before any check of the tool's."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is not None and not (value.isascii() and value.isdigit() and int(value) <= LATEST):
        raise InputError(
            f"SOURCE_DATE_EPOCH={value!r}: not a count of seconds since 1970 (such as "
            "1700000000); set it to one, or unset it"
        )
    return value
