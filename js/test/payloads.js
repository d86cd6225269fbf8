// Payloads from the usual XSS cheat sheets: tags, attributes, URLs, entity tricks.
export const PAYLOADS = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  '"><svg onload=alert(1)>',
  "[click](javascript:alert(1))",
  "[click](JaVaScRiPt:alert(1))",
  "[click](javascript&#58;alert(1))",
  "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  '[x](https://ok.example/"onmouseover="alert(1))',
  "**<b onclick=alert(1)>bold</b>**",
  "`<script>alert(1)</script>`",
  "```\n</code></pre><script>alert(1)</script>\n```",
  "<iframe src=javascript:alert(1)>",
  "<a href='javascript:alert(1)'>x</a>",
  "_<style>body{display:none}</style>_",
];
