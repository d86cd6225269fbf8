import { test } from "node:test";
import assert from "node:assert/strict";
import { escapeHtml, renderMarkdown, renderInline, isSafeUrl } from "../markdown.js";
import { JSDOM } from "jsdom";
import { PAYLOADS } from "./payloads.js";


function assertInert(html) {
  const dom = new JSDOM(`<div id="root">${html}</div>`);
  const root = dom.window.document.getElementById("root");
  for (const node of root.querySelectorAll("*")) {
    assert.ok(
      ["P", "BR", "STRONG", "EM", "CODE", "PRE", "A", "UL", "OL", "LI", "BLOCKQUOTE", "H1", "H2", "H3", "H4", "H5", "H6"].includes(node.tagName),
      `unexpected element ${node.tagName} in ${html}`,
    );
    for (const attr of node.attributes) {
      assert.ok(!/^on/i.test(attr.name), `event handler ${attr.name} in ${html}`);
      if (attr.name === "href") assert.match(attr.value, /^(https?:\/\/|mailto:)/i);
      assert.ok(["href", "target", "rel"].includes(attr.name), `attribute ${attr.name}`);
    }
  }
}

test("escapeHtml escapes the five HTML specials", () => {
  assert.equal(escapeHtml(`<a href="x">&'</a>`), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
});

test("XSS payloads render as inert text", () => {
  for (const payload of PAYLOADS) {
    const html = renderMarkdown(payload);
    assertInert(html);
    assert.ok(!/<script/i.test(html), html);
  }
});

test("the visible text of a payload is kept (nothing is silently dropped)", () => {
  const dom = new JSDOM(`<div id="r">${renderMarkdown("<script>alert(1)</script>")}</div>`);
  assert.equal(dom.window.document.getElementById("r").textContent, "<script>alert(1)</script>");
});

test("formatting: headings, emphasis, code, lists, quotes, links", () => {
  const html = renderMarkdown(
    "# Title\nSome **bold** and *it* and `x<y`.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n[site](https://example.com/?a=1&b=2)",
  );
  assert.equal(
    html,
    "<h1>Title</h1><p>Some <strong>bold</strong> and <em>it</em> and <code>x&lt;y</code>.</p>" +
      "<ul><li>one</li><li>two</li></ul><ol><li>first</li></ol><blockquote>quoted</blockquote>" +
      '<p><a href="https://example.com/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">site</a></p>',
  );
});

test("fenced code keeps its text verbatim, escaped", () => {
  assert.equal(renderMarkdown("```py\nif a < b:\n    **x**\n```"), "<pre><code>if a &lt; b:\n    **x**</code></pre>");
});

test("an unterminated fence (mid-stream) still renders", () => {
  assert.equal(renderMarkdown("```\nline"), "<pre><code>line</code></pre>");
});

test("only http, https and mailto links become anchors", () => {
  assert.ok(isSafeUrl("https://a.b") && isSafeUrl("mailto:x@y") && !isSafeUrl("javascript:x"));
  assert.equal(renderInline("[a](ftp://x)"), "[a](ftp://x)");
});
