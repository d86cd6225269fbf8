// DOM helpers every region of the panel uses: elements, disclosures that stay open or closed
// across re-renders, words with `names` in <code>, raster images from data URLs only.
// Nothing here inserts markup: text goes in as text nodes (the kernel's sanitised Markdown
// HTML is inserted by text.js and transcript.js alone, a rich display's sanitised HTML by
// cards.js).

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

export function h(doc, tag, cls, attrs = {}) {
  const node = doc.createElement(tag);
  if (cls) node.className = cls;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

// An <img> for a raster image given as base64 data, or null (an SVG or odd data is never shown).
export function safeImage(doc, image) {
  if (!image || !IMAGE_TYPES.has(image.mime) || typeof image.data !== "string") return null;
  if (!BASE64.test(image.data)) return null;
  const img = h(doc, "img", "pi-image", { alt: "tool image" });
  img.src = `data:${image.mime};base64,${image.data}`;
  return img;
}

// Plain words with `names` in backticks: text nodes and <code> elements (never markup).
export function words(doc, text) {
  const parts = String(text || "").split("`");
  return parts.map((part, i) => {
    if (i % 2 === 0) return doc.createTextNode(part);
    const code = doc.createElement("code");
    code.textContent = part;
    return code;
  });
}

// A value for a quoted CSS attribute selector: [data-x="…"].
export function cssEscape(value) {
  return String(value).replace(/["\\]/g, "\\$&");
}

// <details> the reader opened or closed stay so when their region is drawn again: the choice
// is remembered by key (a tool call id, a lifecycle node, "context", …) for the panel's life.
export class Disclosures {
  constructor(doc) {
    this.doc = doc;
    this.open = new Map(); // key -> open?
  }

  // A <details class=cls> with its <summary>, open if the reader left it open.
  details(key, cls, summaryText) {
    const node = h(this.doc, "details", cls);
    const summary = h(this.doc, "summary");
    summary.textContent = summaryText;
    node.append(summary);
    if (this.open.get(key)) node.open = true;
    this.follow(key, node);
    return node;
  }

  // Remember what the reader does with an existing <details>.
  follow(key, node) {
    node.addEventListener("toggle", () => this.open.set(key, node.open));
  }

  isOpen(key) {
    return !!this.open.get(key);
  }

  // Whether the reader ever opened or closed it (else the region picks its default).
  known(key) {
    return this.open.has(key);
  }
}
