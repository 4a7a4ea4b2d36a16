"""The referee's journal: the log on disk, the records it holds, and resuming from it.

- :mod:`.log`: the append-only, fsynced JSON Lines file, its repair and compaction;
- :mod:`companion.referee.records`: the one definition of every record and its data;
- :mod:`.resume`: replaying the records into the state to resume.
"""

from companion.appliance.journal.log import (
    ARCHIVE_NAME,
    FileSystem,
    Journal,
    JournalError,
    JournalFile,
    OsFile,
    read_archive,
)
from companion.appliance.journal.resume import ResumeState, resume
from companion.referee.records import (
    HOWS,
    KINDS,
    MODES,
    DisputeData,
    How,
    Kind,
    Mode,
    Record,
)

__all__ = [
    "ARCHIVE_NAME",
    "HOWS",
    "KINDS",
    "MODES",
    "DisputeData",
    "FileSystem",
    "How",
    "Journal",
    "JournalError",
    "JournalFile",
    "Kind",
    "Mode",
    "OsFile",
    "Record",
    "ResumeState",
    "read_archive",
    "resume",
]
