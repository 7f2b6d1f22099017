"""Running the real kubectl against a draplane apiserver from tests."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

DISPATCHER = "/usr/bin/kubectl"


@dataclass
class Result:
    code: int
    out: str
    err: str


class Kubectl:
    def __init__(self, kubeconfig: Path, *, binary: str = DISPATCHER, home: Path | None = None) -> None:
        self.binary = binary
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home or kubeconfig.parent)}

    async def __call__(self, *args: str, stdin: str | None = None, ok: bool = True, timeout: float = 60) -> Result:
        proc = await asyncio.create_subprocess_exec(
            self.binary,
            *args,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        result = Result(proc.returncode or 0, out.decode(), err.decode())
        if ok and result.code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.code}): {result.err or result.out}")
        return result

    def spawn(self, *args: str) -> asyncio.Future[asyncio.subprocess.Process]:
        return asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                self.binary, *args, env=self.env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
        )
