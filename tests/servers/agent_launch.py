"""How each real agent is started against a fake model server, in a fresh home.

``launch(name, server_url, root)`` makes ``root/home`` (and the agent's config
in it) and returns the command and the environment: no login, no telemetry,
no update check, and the settings that make the agent ask before edits and
commands.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

BIN = Path(__file__).parent.parent / "agents" / "node_modules" / ".bin"
"""Where ``scripts/setup.sh`` installs the agents (``npm ci`` in ``tests/agents``)."""

AGENTS = ("claude", "codex", "gemini", "opencode", "qwen", "copilot", "cline")
EXECUTABLES = {
    "claude": "claude-agent-acp",
    "codex": "codex-acp",
    "gemini": "gemini",
    "opencode": "opencode",
    "qwen": "qwen",
    "copilot": "copilot",
    "cline": "cline",
}
GEMINI_MODEL = "gemini-2.5-flash"
OPENCODE_MODEL = "anthropic/claude-sonnet-4-5"
OPENCODE_OFFLINE = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
}
"""What keeps OpenCode (1.18) off the network: its model list (models.dev) from the
snapshot it ships, no update check (the person's ``autoupdate`` is read from the global
config only), no sharing, no language server downloads."""
QWEN_MODEL = "qwen3-coder-plus"
COPILOT_CACHE = BIN.parent / ".cache"
"""Where Copilot CLI unpacks its package on first start (shared: 1.5 s less a start)."""


@dataclass(frozen=True)
class Launch:
    """A command line and the environment to start one agent with."""

    name: str
    command: list[str]
    env: dict[str, str]
    home: Path


def installed(name: str) -> bool:
    return (BIN / EXECUTABLES[name]).exists()


def launch(name: str, server_url: str, root: Path) -> Launch:
    """The command and environment for agent ``name`` talking to ``server_url``."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": shutil.which("bash") or "/bin/sh",
        "USER": os.environ.get("USER", "test"),
        "LOGNAME": os.environ.get("LOGNAME", "test"),
        "TMPDIR": str(root),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    command = [str(BIN / EXECUTABLES[name])]
    if name == "claude":
        env |= {
            "ANTHROPIC_BASE_URL": server_url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "ENABLE_TOOL_SEARCH": "false",
        }
    elif name == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            "\n".join(
                [
                    'model = "gpt-5.5"',
                    'model_provider = "fake"',
                    "check_for_update_on_startup = false",
                    "[analytics]",
                    "enabled = false",
                    "[otel]",
                    'exporter = "none"',
                    "[model_providers.fake]",
                    'name = "fake"',
                    f'base_url = "{server_url}/v1"',
                    'wire_api = "responses"',
                    'env_key = "FAKE_API_KEY"',
                    "stream_max_retries = 0",
                    "request_max_retries = 0",
                    "",
                ]
            )
        )
        env |= {"CODEX_HOME": str(codex_home), "FAKE_API_KEY": "test-key"}
    elif name == "gemini":
        settings = home / ".gemini"
        settings.mkdir(exist_ok=True)
        (settings / "settings.json").write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "telemetry": {"enabled": False},
                    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                    "model": {"name": GEMINI_MODEL},
                }
            )
        )
        env |= {
            "GOOGLE_GEMINI_BASE_URL": server_url,
            "GEMINI_API_KEY": "test-key",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
        command += ["--acp", "-m", GEMINI_MODEL]
    elif name == "opencode":
        config = home / ".config" / "opencode"
        config.mkdir(parents=True, exist_ok=True)
        (config / "opencode.json").write_text(
            json.dumps(
                {
                    "$schema": "https://opencode.ai/config.json",
                    "model": OPENCODE_MODEL,
                    "provider": {"anthropic": {"options": {"baseURL": f"{server_url}/v1"}}},
                    "autoupdate": False,
                    "share": "disabled",
                }
            )
        )
        plugin_installed(config)
        env |= {
            **OPENCODE_OFFLINE,
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "ANTHROPIC_API_KEY": "test-key",
        }
        command += ["acp"]
    elif name == "qwen":
        settings = home / ".qwen"
        settings.mkdir(exist_ok=True)
        (settings / "settings.json").write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "openai"}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "telemetry": {"enabled": False},
                    "general": {"enableAutoUpdate": False},
                    "model": {"name": QWEN_MODEL},
                    # Its shell tool runs commands in a pseudo-terminal by default, and a
                    # loaded machine can see a command that ended well reported as killed by
                    # SIGHUP (the terminal closed first); without one it reads the exit code.
                    "tools": {"shell": {"enableInteractiveShell": False}},
                    # After each turn it asks the model for follow-up suggestions, and a
                    # memory agent of its own asks it too.
                    "ui": {"enableFollowupSuggestions": False},
                    "memory": {
                        "enableManagedAutoMemory": False,
                        "enableManagedAutoDream": False,
                        "enableAutoSkill": False,
                    },
                }
            )
        )
        env |= {
            "OPENAI_BASE_URL": f"{server_url}/v1",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_MODEL": QWEN_MODEL,
            "QWEN_CODE_NO_RELAUNCH": "true",
        }
        command += ["--acp"]
    elif name == "copilot":
        # Offline: no GitHub login, telemetry, web tools or update; the model is ours.
        env |= {
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": f"{server_url}/v1",
            "COPILOT_PROVIDER_API_KEY": "test-key",
            "COPILOT_MODEL": "gpt-4.1",
            "COPILOT_AUTO_UPDATE": "false",
            "XDG_CACHE_HOME": str(COPILOT_CACHE),
        }
        command += ["--acp"]
    elif name == "cline":
        # Its ACP side takes the provider from the environment, its address from the
        # settings `cline auth` writes (which need updatedAt); telemetry and updates off.
        settings = home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        provider = {
            "provider": "openai-compatible",
            "apiKey": "test-key",
            "model": "gpt-4.1",
            "baseUrl": f"{server_url}/v1",
        }
        described = {"settings": provider, "updatedAt": "2026-01-01T00:00:00.000Z"}
        (settings / "providers.json").write_text(
            json.dumps(
                {
                    "version": 1,
                    "lastUsedProvider": "openai-compatible",
                    "modes": {},
                    "providers": {"openai-compatible": {**described, "tokenSource": "manual"}},
                }
            )
        )
        (settings / "global-settings.json").write_text(
            json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False})
        )
        env |= {
            "CLINE_API_KEY": "test-key",
            "CLINE_PROVIDER": "openai-compatible",
            "CLINE_MODEL": "gpt-4.1",
            "CLINE_NO_AUTO_UPDATE": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Its feature-flag client asks its servers at every start; this alone stops it.
            "E2E_TEST": "true",
        }
        command += ["--acp", "--auto-approve", "false"]
    else:
        raise ValueError(f"unknown agent {name!r}; expected one of {', '.join(AGENTS)}")
    return Launch(name, command, env, home)


def plugin_installed(config: Path) -> None:
    """OpenCode installs ``@opencode-ai/plugin`` from npm into each of its config folders
    at start unless the folder already has ``node_modules`` and a lock file naming it."""
    (config / "node_modules").mkdir(exist_ok=True)
    wanted = {"@opencode-ai/plugin": "*"}
    (config / "package.json").write_text(json.dumps({"dependencies": wanted}))
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": wanted}}}
    (config / "package-lock.json").write_text(json.dumps(lock))
