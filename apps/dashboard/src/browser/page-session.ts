// The live page's token arrives in the fragment of the link `lean-grpo dashboard` prints
// (`#token=…`; add `&RUN` to open a run): browsers never send a fragment to a server. The
// page takes it out of the address bar and history at once, and trades it for the
// dashboard's session cookie (HttpOnly: no script can read it afterwards).
const TOKEN_FRAGMENT = /^#token=([^&]*)(?:&(.*))?$/;

/** Trades a #token=… for the session cookie; says why not when the dashboard refuses it. */
export async function tradeFragmentToken(): Promise<string | undefined> {
  const match = TOKEN_FRAGMENT.exec(location.hash);
  if (!match) return undefined;
  history.replaceState(null, "", `${location.pathname}${location.search}${match[2] ? `#${match[2]}` : ""}`);
  let token: string;
  try {
    token = decodeURIComponent(match[1]!);
  } catch {
    return "the token in the link is malformed: open the link `lean-grpo dashboard` printed";
  }
  const response = await fetch(new URL("session", location.href), {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    credentials: "same-origin",
  });
  return response.ok ? undefined : "the token in the link was refused: open the link this dashboard printed when it started";
}
