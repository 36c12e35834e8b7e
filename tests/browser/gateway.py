"""A Jupyter Kernel Gateway on loopback, and JupyterLab in gateway mode in front of it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from .servers import JupyterServer, python_for_kernels


class KernelGateway(JupyterServer):
    """``jupyter kernelgateway`` with the browser tests' kernelspec, config and data dirs.

    Its kernels run the project's venv python with the repository on ``PYTHONPATH``,
    as a plain JupyterLab's do. It lists its kernels (JupyterLab in gateway mode reads
    them) and answers only requests that carry its token.
    """

    ready_path = "api/kernelspecs"

    def __init__(self, base: Path) -> None:
        super().__init__(base)
        # A gateway starts kernels with PATH and KERNEL_* only, not its own environment:
        # the kernelspec written into its data dir (with PYTHONPATH) must win over the
        # venv's own python3 spec, which jupyter_core would otherwise find first.
        self._env["JUPYTER_PREFER_ENV_PATH"] = "0"

    @property
    def pid(self) -> int:
        """The gateway's process id (its kernels' parent)."""
        if self._proc is None:
            raise RuntimeError("the kernel gateway has not started")
        return self._proc.pid

    def command(self) -> list[str]:
        return [
            str(python_for_kernels()),
            "-m",
            "kernel_gateway",
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={self.port}",
            "--KernelGatewayApp.port_retries=0",
            f"--KernelGatewayApp.auth_token={self.token}",
            "--KernelGatewayApp.api=kernel_gateway.jupyter_websocket",
            "--KernelGatewayApp.default_kernel_name=python3",
            "--JupyterWebsocketPersonality.list_kernels=True",
            *self.args,
        ]

    def page_url(self, notebook: str) -> str:
        raise TypeError("a kernel gateway serves no pages; open them in its JupyterLab")


SERVER_SIDE = Path(__file__).parent / "server_side"
"""Modules JupyterLab's server imports (``gateway_connection``)."""


def lab_through(gateway: KernelGateway, base: Path) -> JupyterServer:
    """A JupyterLab (not started) whose kernels all run under ``gateway``, connected to them
    with :class:`gateway_connection.UsedGatewayConnection` (no orphaned gateway connections)."""
    lab = JupyterServer(
        base,
        "lab",
        args=[
            f"--gateway-url={gateway.url.rstrip('/')}",
            f"--GatewayClient.auth_token={gateway.token}",
            "--GatewayClient.request_timeout=60",
            "--GatewayClient.connect_timeout=30",
            "--ServerApp.kernel_websocket_connection_class="
            "gateway_connection.UsedGatewayConnection",
        ],
    )
    lab.add_python_path(SERVER_SIDE)
    return lab


@contextlib.contextmanager
def gateway_and_lab(base: Path) -> Iterator[tuple[KernelGateway, JupyterServer]]:
    """Start a kernel gateway, then JupyterLab in front of it; stop both at the end."""
    gateway = KernelGateway(base / "gateway").start()
    try:
        lab = lab_through(gateway, base / "lab").start()
        try:
            yield gateway, lab
        finally:
            lab.stop()
    finally:
        gateway.stop()
