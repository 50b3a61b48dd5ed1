// Reading a session's workspace straight from OPFS in the page context,
// not through the app: what the end-to-end tests and the probes check
// the app's claims against.

/** Files named `name` in any OPFS workspace, read straight from OPFS. */
export async function readWorkspaceFile(page, name) {
  return page.evaluate(async (name) => {
    const root = await navigator.storage.getDirectory();
    let workspaces;
    try {
      workspaces = await root.getDirectoryHandle('workspaces');
    } catch {
      return [];
    }
    const found = [];
    for await (const [, handle] of workspaces.entries()) {
      if (handle.kind !== 'directory') continue;
      try {
        found.push(await (await (await handle.getFileHandle(name)).getFile()).text());
      } catch {
        // not in this workspace
      }
    }
    return found;
  }, name);
}
