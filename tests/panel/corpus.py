"""Realistic model answers (what data-science questions get back) and hostile ones.

``ANSWERS`` are Markdown as models write it: pandas-style tables, nested and numbered lists
with start numbers, Python and SQL fences, inline and display math in both spellings, dollar
amounts, links, a remote image, strikethrough, escapes and entities. ``HOSTILE`` holds the XSS
payloads of the old tests (js/test/payloads.js and tests/panel/test_static.py) and more:
entity-encoded ``javascript:``, ``vbscript:`` and ``data:`` URLs, SVG and MathML tricks.
"""

from __future__ import annotations

SUMMARY = """\
## Summary of `sales.csv`

The frame has **1,204 rows** and 5 columns; `region` has ~~three~~ four distinct values.

| region | orders | revenue | mean_ticket |
|:-------|-------:|--------:|------------:|
| North  |    312 | 48,210.50 | 154.52 |
| South  |    298 | 41,003.00 | 137.59 |
| East   |    401 | 66,870.25 | 166.76 |
| West   |    193 | 22,114.75 | 114.58 |

Steps I took:

3. Loaded the file with `pd.read_csv`.
4. Cleaned the data:
   - dropped 12 rows with a missing `order_id`;
   - parsed `date` as datetime:
     1. first with `format="%Y-%m-%d"`,
     2. then the rest with `dayfirst=True`.
5. Grouped by region.

```python
import pandas as pd

df = pd.read_csv("sales.csv", parse_dates=["date"])
summary = (
    df.groupby("region")
      .agg(orders=("order_id", "count"), revenue=("amount", "sum"))
      .assign(mean_ticket=lambda t: t.revenue / t.orders)
)
print(summary.round(2))  # the table above
```

The same in SQL:

```sql
SELECT region, COUNT(order_id) AS orders, SUM(amount) AS revenue
FROM sales
WHERE amount > 0 -- refunds excluded
GROUP BY region
ORDER BY revenue DESC;
```
"""

MATH = """\
The sample variance is $s^2 = \\frac{1}{n-1}\\sum_{i=1}^{n}(x_i - \\bar{x})^2$, and the
standard error of the mean is \\(\\sigma / \\sqrt{n}\\).

For a normal distribution:

$$
f(x) = \\frac{1}{\\sigma\\sqrt{2\\pi}} e^{-\\frac{(x-\\mu)^2}{2\\sigma^2}}
$$

and the likelihood of the sample is

\\[
L(\\mu, \\sigma) = \\prod_{i=1}^{n} f(x_i)
\\]

A ticket costs $5 and a bundle $10, so three tickets cost $15.
This one is broken on purpose: $\\frac{1}{$ stays readable.
"""

LINKS = """\
See the [pandas docs](https://pandas.pydata.org/docs/) and
[Wikipedia](https://en.wikipedia.org/wiki/Variance_(statistics)), or mail
<mailto:team@example.com>. A bare URL: https://example.org/path?q=1&r=2.
Underscores stay in URLs: [a](http://x.example/_z_/file_name_.txt).

![Revenue by region](https://tracker.example/pixel.png?user=42)

> Note: the numbers are
> **preliminary**.

Escapes and entities: \\*not italic\\*, 2 \\< 3, &copy; 2024, &amp;, &#x3C;tag&#x3E;, a_b_c.

- [x] load
- [ ] plot

---

Done.
"""

ANSWERS = {"summary": SUMMARY, "math": MATH, "links": LINKS}

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><img src=x onerror=alert(1)></mtext></math>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](javascript&#58;alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](java&#x73;cript:alert(1))",
    "[click](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](VBScript&#58;msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](data&colon;text/html,<script>alert(1)</script>)",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    '[x](https://ok.example/"onmouseover="alert(1))',
    "[x](https://ok.example/ 'title\" onmouseover=\"alert(1)')",
    "**<b onclick=alert(1)>bold</b>**",
    "`<script>alert(1)</script>`",
    "```\n</code></pre><script>alert(1)</script>\n```",
    "```html\n<img src=x onerror=alert(1)>\n```",
    "<iframe src=javascript:alert(1)>",
    "<a href='javascript:alert(1)'>x</a>",
    "_<style>body{display:none}</style>_",
    "$\\href{javascript:alert(1)}{x}$",
    "$\\text{<img src=x onerror=alert(1)>}$",
    "$$\\style{color:red}{x}$$",
    "<details open ontoggle=alert(1)>",
]
