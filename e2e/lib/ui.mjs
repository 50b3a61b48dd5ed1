// The page as a user finds it, by the accessible names of DESIGN.md: the
// helpers the newer end-to-end files share.

export const transcript = (page) => page.getByRole('log', { name: 'Transcript' });
export const card = (page) => transcript(page).getByRole('region', { name: 'Recovery' });
export const commandBlock = (page, line) =>
  transcript(page).getByRole('group', { name: `Command: ${line}` });

export async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Saves a model profile in the Profiles dialog and uses it for the session. */
export async function addProfile(page, { name, provider, baseUrl, model, key }) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = page.getByRole('dialog', { name: 'Profiles' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: provider });
  await dialog.getByLabel('Base URL', { exact: true }).fill(baseUrl);
  await dialog.getByLabel('Model', { exact: true }).fill(model);
  await dialog.getByLabel('API key', { exact: true }).fill(key);
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: name });
  await item.getByText('API key set').waitFor();
  await item.getByRole('button', { name: 'Use for this session' }).click();
  await item.getByText('(selected)').waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
}
