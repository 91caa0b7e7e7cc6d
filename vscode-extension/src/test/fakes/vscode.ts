/**
 * A small stand-in for the `vscode` module, for unit tests of the views (the tests' bundle aliases
 * `vscode` to this file). It records what the views ask of VS Code; only what they use is here.
 */
export const calls: { command: string; args: unknown[] }[] = [];
export const messages: { kind: string; text: string }[] = [];
export const infoPick: { value: string | undefined } = { value: undefined };

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (listener: (e: T) => void) => {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum TreeItemCollapsibleState {
  None = 0,
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  contextValue?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState,
  ) {}
}

export class Uri {
  private constructor(readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri(p);
  }
  toString(): string {
    return `file://${this.fsPath}`;
  }
}

export interface FakeTreeView {
  message?: string;
  description?: string;
  dispose(): void;
}

export const created: { outputs: { name: string; text: string[] }[]; trees: Record<string, FakeTreeView> } = { outputs: [], trees: {} };

export const window = {
  createOutputChannel(name: string) {
    const channel = { name, text: [] as string[] };
    created.outputs.push(channel);
    return {
      append: (t: string) => void channel.text.push(t),
      appendLine: (t: string) => void channel.text.push(t + "\n"),
      clear: () => void (channel.text.length = 0),
      show: () => undefined,
      dispose: () => undefined,
    };
  },
  createTreeView(id: string): FakeTreeView {
    const view: FakeTreeView = { dispose: () => undefined };
    created.trees[id] = view;
    return view;
  },
  showErrorMessage: async (text: string) => void messages.push({ kind: "error", text }),
  showWarningMessage: async (text: string) => void messages.push({ kind: "warning", text }),
  /** Answers with `infoPick` (what the test says the person clicks), else dismissed. */
  showInformationMessage: async (text: string, ...items: string[]) => {
    messages.push({ kind: "info", text: [text, ...items].join(" | ") });
    return infoPick.value;
  },
  setStatusBarMessage: (text: string) => {
    messages.push({ kind: "status", text });
    return { dispose: () => undefined };
  },
};

export const commands = {
  executeCommand: async (command: string, ...args: unknown[]) => void calls.push({ command, args }),
};

export const workspace = { workspaceFolders: undefined as { uri: Uri }[] | undefined };
