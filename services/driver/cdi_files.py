"""The CDI spec directory: atomic writes and removals of spec files, off the event loop.

Why this module exists: a runtime may read the CDI directory at any moment,
so a spec file must appear whole or not at all (write to a temporary file,
fsync, rename, fsync the directory: `services.runtime.atomic_files`), and a
driver must be able to list its own transient claim specs to remove those no
checkpoint entry accounts for after a crash. Every file operation runs on the
directory's own thread, in the order the driver asked for them, so an fsync
never stalls the driver's other tasks and a removal never overtakes the write
before it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from services.driver import cdi
from services.runtime.atomic_files import FileThread, Fsync, write_atomically


class CdiDirectory:
    """The CDI spec files one driver owns under ``root``; ``close`` when done with it."""

    def __init__(self, root: Path, *, driver: str, fsync: Fsync = os.fsync) -> None:
        self.root = root
        self.driver = driver
        self._fsync = fsync
        self._files = FileThread(name=f"cdi-files-{driver}")

    def close(self) -> None:
        """End the directory's thread once the operations already asked for are done."""
        self._files.close()

    def path_for(self, claim_uid: str) -> Path:
        return self.root / cdi.claim_spec_file(self.driver, claim_uid)

    async def write(self, file_name: str, spec: dict[str, Any]) -> Path:
        """Write ``spec`` atomically as ``file_name``."""
        path = self.root / file_name
        data = cdi.render(spec).encode()
        await self._files.run(write_atomically, path, data, mode=0o644, fsync=self._fsync)
        return path

    async def write_claim(self, claim_uid: str, spec: dict[str, Any]) -> Path:
        return await self.write(cdi.claim_spec_file(self.driver, claim_uid), spec)

    async def write_common(self, spec: dict[str, Any]) -> Path:
        return await self.write(cdi.common_spec_file(self.driver), spec)

    async def has_claim(self, claim_uid: str) -> bool:
        """Whether the claim's spec file is there."""
        return await self._files.run(self.path_for(claim_uid).exists)

    async def remove_claim(self, claim_uid: str) -> None:
        """Remove the claim's spec file, if any.

        Not fsynced: a file that comes back after a crash has no checkpoint
        entry, and `Preparer.recover` removes it again.
        """
        await self._files.run(self.path_for(claim_uid).unlink, missing_ok=True)

    async def claim_uids(self) -> list[str]:
        """UIDs of the claims that have a transient spec file here (the common spec excluded)."""
        return await self._files.run(self._claim_uids)

    def _claim_uids(self) -> list[str]:
        prefix = cdi.transient_spec_name(self.driver, "")[: -len(cdi.SPEC_EXTENSION)]
        common = cdi.common_spec_file(self.driver)
        if not self.root.is_dir():
            return []
        uids = []
        for path in sorted(self.root.iterdir()):
            name = path.name
            if name == common or not name.startswith(prefix) or not name.endswith(cdi.SPEC_EXTENSION):
                continue
            uids.append(name[len(prefix) : -len(cdi.SPEC_EXTENSION)])
        return uids
