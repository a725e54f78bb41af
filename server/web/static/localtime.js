// Every <time datetime> of a page in the visitor's own time zone: the server writes UTC (it cannot
// know the reader's zone), and a reader should not have to work out what 18:00 UTC is where they are.
// A module of its own because the pages' CSP allows scripts from 'self' only (no inline script).

const FORMAT = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short",
});

/** Rewrite the <time> elements under `root` (the UTC words stay in their title). */
export function localTimes(root = document) {
  for (const node of root.querySelectorAll("time[datetime]")) {
    if (node.dataset.local) continue;
    const when = new Date(node.getAttribute("datetime"));
    if (Number.isNaN(when.getTime())) continue;
    node.title = node.textContent;
    node.textContent = FORMAT.format(when);
    node.dataset.local = "1";
  }
}

localTimes();
