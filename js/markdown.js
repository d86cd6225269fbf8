// A small Markdown renderer that is safe by construction (the twin of
// pi_notebook/notebook/panel/markdown.py): every character is HTML-escaped first, then a
// whitelist of formatting is turned into tags written here. Link URLs must start with
// http://, https:// or mailto: or the link stays text. No input can produce a script, an
// event-handler attribute or a javascript: URL.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const LINK = /\[([^\]\n]+)\]\(([^()\s]+)\)/g;
const BOLD = /\*\*(?=\S)(.+?)(?<=\S)\*\*/g;
const ITALIC = /(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/g;
const ITALIC_UNDERSCORE = /(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])/g;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const ORDERED = /^\s*\d{1,9}[.)]\s+(.*)$/;

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export function isSafeUrl(url) {
  return SAFE_URL.test(url);
}

function inlineText(text) {
  return text
    .replace(LINK, (whole, label, url) =>
      SAFE_URL.test(url)
        ? `<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`
        : whole,
    )
    .replace(BOLD, "<strong>$1</strong>")
    .replace(ITALIC, "<em>$1</em>")
    .replace(ITALIC_UNDERSCORE, "<em>$1</em>");
}

export function renderInline(raw) {
  const pieces = escapeHtml(raw).split("`");
  let out = "";
  pieces.forEach((piece, i) => {
    if (i % 2 === 1 && i < pieces.length - 1) out += `<code>${piece}</code>`;
    else if (i % 2 === 1) out += "`" + inlineText(piece);
    else out += inlineText(piece);
  });
  return out;
}

export function renderMarkdown(text) {
  const lines = String(text ?? "").replace(/\r\n/g, "\n").split("\n");
  const html = [];
  const paragraph = [];
  let listKind = null;
  const closeParagraph = () => {
    if (paragraph.length) {
      html.push("<p>" + paragraph.map(renderInline).join("<br>") + "</p>");
      paragraph.length = 0;
    }
  };
  const closeList = () => {
    if (listKind !== null) {
      html.push(`</${listKind}>`);
      listKind = null;
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const stripped = line.trim();
    if (stripped.startsWith("```")) {
      closeParagraph();
      closeList();
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith("```")) body.push(lines[i++]);
      html.push("<pre><code>" + escapeHtml(body.join("\n")) + "</code></pre>");
      continue;
    }
    const heading = HEADING.exec(line);
    const bullet = BULLET.exec(line);
    const ordered = ORDERED.exec(line);
    if (!stripped) {
      closeParagraph();
      closeList();
    } else if (heading) {
      closeParagraph();
      closeList();
      const level = heading[1].length;
      html.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
    } else if (bullet || ordered) {
      closeParagraph();
      const kind = bullet ? "ul" : "ol";
      if (listKind !== kind) {
        closeList();
        html.push(`<${kind}>`);
        listKind = kind;
      }
      html.push(`<li>${renderInline((bullet || ordered)[1])}</li>`);
    } else if (stripped.startsWith(">")) {
      closeParagraph();
      closeList();
      html.push(`<blockquote>${renderInline(stripped.slice(1).trim())}</blockquote>`);
    } else {
      closeList();
      paragraph.push(line);
    }
  }
  closeParagraph();
  closeList();
  return html.join("");
}
