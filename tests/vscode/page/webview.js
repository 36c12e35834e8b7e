// The notebook webview of the VS Code test host: VS Code's own widget manager
// (@vscode/jupyter-ipywidgets8) on a page, fed by the host (host.py) the way VS
// Code's extension host feeds its webview. Every kernel message arrives through
// `window.webview.deliver(msg)`; what the widgets send goes out through the
// host's `hostPost({type, payload})` binding, on the main shell (no subshell id).
// No kernel_info, comm_info or widget-state request is ever sent from here.

const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";

/** A minimal Lumino-style signal: what the widget manager connects to. */
class Signal {
  constructor(sender) {
    this.sender = sender;
    this.slots = [];
  }
  connect(slot, thisArg) {
    this.slots.push([slot, thisArg]);
    return true;
  }
  disconnect(slot, thisArg) {
    const before = this.slots.length;
    this.slots = this.slots.filter(([s, t]) => !(s === slot && t === thisArg));
    return this.slots.length !== before;
  }
  emit(args) {
    for (const [slot, thisArg] of [...this.slots]) slot.call(thisArg, this.sender, args);
  }
}

let counter = 0;
const uuid = () => `${Date.now().toString(16)}${(counter++).toString(16)}${Math.random().toString(16).slice(2)}`;

/** A message future as @jupyterlab/services hands one out (the shims hook callbacks on it). */
class Future {
  constructor(msg) {
    this.msg = msg;
    this.onIOPub = () => {};
    this.onReply = () => {};
    this.onStdin = () => {};
    this.done = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }
}

/** The kernel as the widget manager sees it: comms, futures, signals. */
class KernelProxy {
  constructor(post, options) {
    this.post = post;
    this.id = options.id;
    this.clientId = options.clientId;
    this.username = options.userName;
    this.name = "python3";
    this.status = "idle";
    this.connectionStatus = "connected";
    this.statusChanged = new Signal(this);
    this.connectionStatusChanged = new Signal(this);
    this.iopubMessage = new Signal(this);
    this.unhandledMessage = new Signal(this);
    this.anyMessage = new Signal(this);
    this.disposed = new Signal(this);
    this.pendingInput = new Signal(this);
    this.targets = new Map();
    this.comms = new Map();
    this.futures = new Map();
  }

  message(msgType, content, metadata = {}) {
    return {
      header: {
        msg_id: uuid(),
        msg_type: msgType,
        session: this.clientId,
        username: this.username,
        date: new Date().toISOString(),
        version: "5.3",
      },
      parent_header: {},
      metadata,
      content,
      buffers: [],
      channel: "shell",
    };
  }

  sendShell(msg) {
    const future = new Future(msg);
    this.futures.set(msg.header.msg_id, future);
    this.post({ type: "IPyWidgets_msg", payload: { id: msg.header.msg_id, data: JSON.stringify(msg) } });
    return future;
  }

  registerCommTarget(name, callback) {
    this.targets.set(name, callback);
  }

  removeCommTarget(name) {
    this.targets.delete(name);
  }

  hasComm(commId) {
    return this.comms.has(commId);
  }

  createComm(targetName, commId = uuid()) {
    const comm = new CommProxy(this, targetName, commId);
    this.comms.set(commId, comm);
    return comm;
  }

  requestCommInfo() {
    throw new Error("the VS Code webview never asks the kernel for its comms");
  }

  /** One kernel message from the host. */
  async deliver(msg) {
    const parent = msg.parent_header?.msg_id;
    const future = parent ? this.futures.get(parent) : undefined;
    if (msg.channel === "shell") {
      future?.onReply(msg);
      return;
    }
    if (msg.header.msg_type === "status") {
      this.status = msg.content.execution_state;
      this.statusChanged.emit(this.status);
    }
    future?.onIOPub(msg);
    this.iopubMessage.emit(msg);
    const type = msg.header.msg_type;
    const content = msg.content;
    if (type === "comm_open") {
      const target = this.targets.get(content.target_name);
      if (target === undefined) return;
      const comm = this.createComm(content.target_name, content.comm_id);
      await target(comm, msg);
    } else if (type === "comm_msg") {
      await this.comms.get(content.comm_id)?.onMsg?.(msg);
    } else if (type === "comm_close") {
      const comm = this.comms.get(content.comm_id);
      this.comms.delete(content.comm_id);
      await comm?.onClose?.(msg);
    }
  }
}

/** One comm, with the shape of @jupyterlab/services' IComm. */
class CommProxy {
  constructor(kernel, targetName, commId) {
    this.kernel = kernel;
    this.targetName = targetName;
    this.commId = commId;
    this.onMsg = null;
    this.onClose = null;
    this.isDisposed = false;
  }
  open(data, metadata, buffers) {
    const msg = this.kernel.message("comm_open", { comm_id: this.commId, target_name: this.targetName, data }, metadata);
    return this.kernel.sendShell(msg, buffers);
  }
  send(data, metadata, buffers) {
    const msg = this.kernel.message("comm_msg", { comm_id: this.commId, data }, metadata);
    return this.kernel.sendShell(msg, buffers);
  }
  close(data, metadata) {
    this.kernel.comms.delete(this.commId);
    const msg = this.kernel.message("comm_close", { comm_id: this.commId, data }, metadata);
    return this.kernel.sendShell(msg);
  }
  dispose() {
    this.isDisposed = true;
  }
}

/** Loads widget modules that are not built in: the host serves them (anywidget's from the kernel's env). */
class ScriptLoader {
  constructor(post) {
    this.post = post;
    this.widgetsRegisteredInRequireJs = new Set();
    this.waiting = new Map();
    this.errors = [];
  }
  loadWidgetScript(moduleName, moduleVersion) {
    let found = this.waiting.get(moduleName);
    if (found === undefined) {
      found = new Promise((resolve, reject) => {
        this.post({ type: "IPyWidgets_WidgetScriptSourceRequest", payload: { moduleName, moduleVersion } });
        this.waiting.set(`${moduleName}:reply`, { resolve, reject });
      });
      this.waiting.set(moduleName, found);
    }
    return found;
  }
  /** The host's answer to a script-source request. */
  sourceReply({ moduleName, scriptUri }) {
    const pending = this.waiting.get(`${moduleName}:reply`);
    if (pending === undefined) return;
    if (!scriptUri) {
      pending.reject(new Error(`no script for ${moduleName}`));
      return;
    }
    window.requirejs.config({ paths: { [moduleName]: scriptUri.replace(/\.js$/, "") } });
    this.widgetsRegisteredInRequireJs.add(moduleName);
    pending.resolve();
  }
  successHandler() {}
  errorHandler(className, moduleName, moduleVersion, error) {
    this.errors.push(`${className} ${moduleName}@${moduleVersion}: ${error}`);
  }
}

/** The notebook's outputs, drawn as VS Code draws them: a widget view, or the next MIME type. */
class Outputs {
  constructor(root, manager) {
    this.root = root;
    this.manager = manager;
    this.cells = new Map();
  }
  cell(cellId) {
    let el = this.cells.get(cellId);
    if (el === undefined) {
      el = document.createElement("div");
      el.className = "vsc-cell";
      el.dataset.cell = cellId;
      this.root.append(el);
      this.cells.set(cellId, el);
    }
    return el;
  }
  /**
   * Replace the cell's outputs with these (the document's current outputs). An
   * output whose index is in `redraw` was replaced by the kernel (update_display_data)
   * and is drawn anew even if it did not change, as VS Code renders a replaced output.
   */
  async show(cellId, outputs, redraw = []) {
    const cell = this.cell(cellId);
    const shown = cell.shown ?? [];
    const next = [];
    for (const [i, output] of outputs.entries()) {
      const json = JSON.stringify(output);
      if (shown[i]?.json === json && !redraw.includes(i)) {
        next.push(shown[i]);
        continue;
      }
      // A changed output is drawn anew; the old element goes (its views with it).
      const el = document.createElement("div");
      el.className = "vsc-output";
      if (shown[i]) shown[i].el.replaceWith(el);
      else cell.append(el); // a widget view attaches only to an element in the page
      next.push({ json, el });
      await this.render(output, el);
    }
    for (const old of shown.slice(outputs.length)) old.el.remove();
    cell.shown = next;
  }
  async render(output, el) {
    if (output.output_type === "stream") {
      el.classList.add("vsc-stream");
      el.textContent = output.text;
      return;
    }
    const data = output.data ?? {};
    const view = data[WIDGET_VIEW];
    if (view && this.manager.has_model(view.model_id)) {
      el.classList.add("vsc-widget");
      el.dataset.modelId = view.model_id;
      const model = await this.manager.get_model(view.model_id);
      const widgetView = await this.manager.create_view(model);
      await this.manager.display_view(null, widgetView, { node: el });
      window.webview.rendered.push({ model_id: view.model_id, at: performance.timeOrigin + performance.now() });
      return;
    }
    // vscode.fallbackToNextRenderer: the next MIME type of the output.
    if (typeof data["text/html"] === "string") {
      el.classList.add("vsc-html");
      el.innerHTML = data["text/html"];
    } else {
      el.classList.add("vsc-plain");
      el.textContent = String(data["text/plain"] ?? "");
    }
  }
}

async function start() {
  const post = (message) => window.hostPost(message);
  const options = await new Promise((resolve) => {
    window.webview = { kernelOptions: resolve, rendered: [] };
    post({ type: "IPyWidgets_Ready" });
  });
  const { activate } = await import("./node_modules/@vscode/jupyter-ipywidgets8/dist/ipywidgets.js");
  activate();
  window.vscIPyWidgets8.load();
  const kernel = new KernelProxy(post, options);
  const loader = new ScriptLoader(post);
  const root = document.getElementById("notebook");
  const manager = new window.vscIPyWidgets.WidgetManager(kernel, root, loader, (m) => console.debug(m), undefined);
  const outputs = new Outputs(root, manager);
  Object.assign(window.webview, {
    kernel,
    loader,
    manager,
    outputs,
    // Kernel messages in order: a comm_open must be handled before the output that names it.
    queue: Promise.resolve(),
    deliver(msg) {
      this.queue = this.queue.then(() => kernel.deliver(msg)).catch((e) => console.error(e));
      return this.queue;
    },
    show(cellId, cellOutputs, redraw) {
      this.queue = this.queue.then(() => outputs.show(cellId, cellOutputs, redraw)).catch((e) => console.error(e));
      return this.queue;
    },
    sourceReply(reply) {
      loader.sourceReply(reply);
    },
  });
  post({ type: "webview_started" });
}

start().catch((error) => {
  console.error(error);
  window.hostPost({ type: "webview_failed", payload: String(error?.stack ?? error) });
});
