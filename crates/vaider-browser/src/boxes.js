(selectors, fullPage, limit) => {
  // The boxes of the elements each selector matches, in CSS pixels of the shot: the viewport's
  // for a viewport shot, the document's (the scroll offset added) for a full-page one. An
  // element with no size is not drawn and gives no box. The selectors arrive as JSON values,
  // never as code; an invalid one stops here with its name.
  const matched = [];
  let total = 0;
  for (const selector of selectors) {
    let elements;
    try {
      elements = document.querySelectorAll(selector);
    } catch (e) {
      return { bad: selector, reason: String((e && e.message) || e) };
    }
    const boxes = [];
    for (const el of elements) {
      const r = el.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0)) continue;
      const dx = fullPage ? window.scrollX : 0;
      const dy = fullPage ? window.scrollY : 0;
      boxes.push({ x: r.left + dx, y: r.top + dy, width: r.width, height: r.height });
      total += 1;
      if (total > limit) return { tooMany: true };
    }
    matched.push({ selector, boxes });
  }
  return { ratio: window.devicePixelRatio || 1, matched };
}
