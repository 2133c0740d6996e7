// Mailward web application: progressive enhancement only. Every page reads and every form
// posts without this script; it adds copy buttons and a confirmation before destructive forms.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      button.textContent = "Copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = "Selected: press Ctrl+C";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 2500);
  });
}
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}
const follow = document.querySelector("a[data-autofollow]");
if (follow) window.location.assign(follow.href);
