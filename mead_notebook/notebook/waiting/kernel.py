"""The running ipykernel (6.29+ and 7.x): finding it, and which pieces it has.

Every piece used here is private ipykernel API, so each is looked up by feature,
once per kernel, with the version that introduced it named beside the check;
a missing one raises :class:`UnsupportedKernelError` saying what to do instead.
"""

from __future__ import annotations

import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeVar

from ...errors import UnsupportedKernelError

INSTEAD: Final = (
    "in this kernel a synchronous cell cannot receive the widget's answers while it "
    "blocks; use `await router.arun(...)` in an async cell, or `router.start(...)` "
    "and let the cell return"
)

COMM_TYPES: Final = frozenset({"comm_open", "comm_msg", "comm_close"})
INFO_TYPES: Final = frozenset({"kernel_info_request", "comm_info_request"})
"""Requests a connecting frontend sends before it can show a widget."""
AT_ONCE: Final = COMM_TYPES | INFO_TYPES
"""What the main thread handles at once, ahead of the cells queued behind the running one."""


@dataclass(frozen=True)
class Features:
    """What the waiting code needs to know about one kernel."""

    shell_thread: bool
    """A shell channel thread receives every shell message (ipykernel 7.0+)."""
    unread_after_reply: bool
    """Replies bypass the shell stream, which can leave a message unread (7.0 - 7.3)."""


T = TypeVar("T", bound="PerKernel")


class PerKernel:
    """A piece of waiting machinery made once per kernel, on first use.

    Its constructor looks up every kernel piece it needs, so :meth:`check` (which
    builds a throwaway one) raises :class:`UnsupportedKernelError` when one is missing.
    """

    _instances: ClassVar[weakref.WeakKeyDictionary[Any, Any]]
    _instances_lock: ClassVar[threading.Lock]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._instances = weakref.WeakKeyDictionary()
        cls._instances_lock = threading.Lock()

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    @classmethod
    def check(cls, kernel: Any) -> None:
        """Raise :class:`UnsupportedKernelError` if the kernel lacks a piece this needs."""
        cls(kernel)

    @classmethod
    def of(cls: type[T], kernel: Any) -> T:
        """The kernel's instance, made (and :meth:`created`) on first use."""
        with cls._instances_lock:
            found: T | None = cls._instances.get(kernel)
            if found is None:
                found = cls._instances[kernel] = cls(kernel)
                found.created()
            return found

    def created(self) -> None:
        """Called once, when :meth:`of` makes the kernel's instance."""


_features: weakref.WeakKeyDictionary[Any, Features] = weakref.WeakKeyDictionary()
_features_lock = threading.Lock()


def current() -> Any | None:
    """The running ipykernel, or None outside one (without importing ipykernel)."""
    module = sys.modules.get("ipykernel.kernelbase")
    if module is None:
        return None
    kernel_class = getattr(module, "Kernel", None)
    if kernel_class is None or not kernel_class.initialized():
        return None
    return kernel_class.instance()


def features(kernel: Any) -> Features:
    """The kernel's features, probed on first use."""
    with _features_lock:
        found = _features.get(kernel)
        if found is None:
            thread = getattr(kernel, "shell_channel_thread", None)  # ipykernel 7.0+
            manager = getattr(thread, "_manager", None)
            found = _features[kernel] = Features(
                shell_thread=thread is not None,
                unread_after_reply=hasattr(manager, "_shell_socket"),  # 7.0 - 7.3 only
            )
        return found


def require(obj: Any, name: str, what: str) -> Any:
    """``obj.name``, or :class:`UnsupportedKernelError` naming ``what`` is missing."""
    value = getattr(obj, name, None)
    if value is None:
        raise UnsupportedKernelError(
            f"ipykernel {version()} has no {what} ({type(obj).__name__}.{name}): {INSTEAD}"
        )
    return value


def version() -> str:
    """The running ipykernel's version, for messages."""
    module = sys.modules.get("ipykernel")
    return str(getattr(module, "__version__", "?"))


def on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
