/**
 * Every DAP message checked against the official protocol types: the interfaces of
 * `@vscode/debugprotocol`'s `debugProtocol.d.ts`, read with the TypeScript compiler. A response
 * is checked as `<Command>Response` (an error as `ErrorResponse`), an event as `<Event>Event`:
 * required properties present, every property's value of its declared type (strings, numbers,
 * booleans, string-literal unions, arrays, nested and inherited interfaces).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type * as TS from "typescript";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const ts: typeof TS = require("typescript");

type Decl = TS.InterfaceDeclaration | TS.TypeAliasDeclaration;

export class DapSchema {
  private decls = new Map<string, Decl>();

  constructor(dts = path.join(__dirname, "..", "..", "node_modules", "@vscode", "debugprotocol", "lib", "debugProtocol.d.ts")) {
    const sf = ts.createSourceFile(dts, fs.readFileSync(dts, "utf8"), ts.ScriptTarget.ES2022, true);
    const visit = (n: TS.Node) => {
      if (ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n)) this.decls.set(n.name.text, n);
      ts.forEachChild(n, visit);
    };
    visit(sf);
    if (!this.decls.has("StoppedEvent")) throw new Error(`no DAP types read from ${dts}`);
  }

  get size(): number {
    return this.decls.size;
  }

  /** The interface a message must satisfy. */
  typeOf(msg: { type?: string; command?: string; event?: string; success?: boolean }): string {
    const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
    if (msg.type === "response") {
      if (msg.success === false) return "ErrorResponse";
      const name = `${cap(msg.command ?? "")}Response`;
      return this.decls.has(name) ? name : "Response";
    }
    if (msg.type === "event") {
      const name = `${cap(msg.event ?? "")}Event`;
      return this.decls.has(name) ? name : "Event";
    }
    if (msg.type === "request") {
      const name = `${cap(msg.command ?? "")}Request`;
      return this.decls.has(name) ? name : "Request";
    }
    return "ProtocolMessage";
  }

  /** The problems of one message (empty: it fits). */
  check(msg: unknown): string[] {
    const name = this.typeOf(msg as never);
    const errors: string[] = [];
    this.named(name, msg, name, errors);
    return errors;
  }

  private members(decl: TS.InterfaceDeclaration): Map<string, TS.PropertySignature> {
    const out = new Map<string, TS.PropertySignature>();
    for (const h of decl.heritageClauses ?? []) {
      for (const t of h.types) {
        const base = this.decls.get(t.expression.getText());
        if (base && ts.isInterfaceDeclaration(base)) for (const [k, v] of this.members(base)) out.set(k, v);
      }
    }
    for (const m of decl.members) if (ts.isPropertySignature(m) && m.name) out.set(m.name.getText().replace(/['"]/g, ""), m);
    return out;
  }

  private named(name: string, value: unknown, where: string, errors: string[]): void {
    const decl = this.decls.get(name);
    if (!decl) return; // a name outside the protocol file: not checked
    if (ts.isTypeAliasDeclaration(decl)) return this.value(decl.type, value, where, errors);
    this.object(this.members(decl), value, where, errors);
  }

  private object(members: Map<string, TS.PropertySignature>, value: unknown, where: string, errors: string[]): void {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      errors.push(`${where}: expected an object, got ${JSON.stringify(value)}`);
      return;
    }
    const obj = value as Record<string, unknown>;
    for (const [k, m] of members) {
      if (!(k in obj) || obj[k] === undefined) {
        if (!m.questionToken) errors.push(`${where}.${k}: required, missing`);
        continue;
      }
      if (m.type) this.value(m.type, obj[k], `${where}.${k}`, errors);
    }
  }

  private value(t: TS.TypeNode, value: unknown, where: string, errors: string[]): void {
    switch (t.kind) {
      case ts.SyntaxKind.StringKeyword:
        if (typeof value !== "string") errors.push(`${where}: expected a string, got ${JSON.stringify(value)}`);
        return;
      case ts.SyntaxKind.NumberKeyword:
        if (typeof value !== "number") errors.push(`${where}: expected a number, got ${JSON.stringify(value)}`);
        return;
      case ts.SyntaxKind.BooleanKeyword:
        if (typeof value !== "boolean") errors.push(`${where}: expected a boolean, got ${JSON.stringify(value)}`);
        return;
      case ts.SyntaxKind.AnyKeyword:
      case ts.SyntaxKind.UnknownKeyword:
      case ts.SyntaxKind.ObjectKeyword:
        return;
    }
    if (ts.isParenthesizedTypeNode(t)) return this.value(t.type, value, where, errors);
    if (ts.isLiteralTypeNode(t)) {
      const lit = t.literal;
      const expected = ts.isStringLiteral(lit) ? lit.text : lit.kind === ts.SyntaxKind.NullKeyword ? null : lit.getText();
      if (value !== expected && String(value) !== expected) errors.push(`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(value)}`);
      return;
    }
    if (ts.isUnionTypeNode(t)) {
      const tries = t.types.map((b) => {
        const e: string[] = [];
        this.value(b, value, where, e);
        return e;
      });
      if (!tries.some((e) => e.length === 0)) errors.push(...tries.sort((a, b) => a.length - b.length)[0]);
      return;
    }
    if (ts.isArrayTypeNode(t)) {
      if (!Array.isArray(value)) {
        errors.push(`${where}: expected an array, got ${JSON.stringify(value)}`);
        return;
      }
      value.forEach((v, i) => this.value(t.elementType, v, `${where}[${i}]`, errors));
      return;
    }
    if (ts.isTypeLiteralNode(t)) {
      const members = new Map<string, TS.PropertySignature>();
      let index: TS.IndexSignatureDeclaration | undefined;
      for (const m of t.members) {
        if (ts.isPropertySignature(m) && m.name) members.set(m.name.getText().replace(/['"]/g, ""), m);
        if (ts.isIndexSignatureDeclaration(m)) index = m;
      }
      this.object(members, value, where, errors);
      if (index && typeof value === "object" && value !== null) {
        for (const [k, v] of Object.entries(value)) if (!members.has(k)) this.value(index.type, v, `${where}.${k}`, errors);
      }
      return;
    }
    if (ts.isTypeReferenceNode(t)) {
      const name = t.typeName.getText();
      if (name === "Array" && t.typeArguments?.length === 1) {
        return this.value(ts.factory.createArrayTypeNode(t.typeArguments[0]), value, where, errors);
      }
      return this.named(name, value, where, errors);
    }
  }
}
