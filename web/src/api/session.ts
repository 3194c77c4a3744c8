/** Who is signed in: the session cookie's user, read from GET /api/v1/me. */
import { api, ApiError, data } from './client';
import type { paths } from './openapi';
import { t } from '../i18n';

export type Me = paths['/api/v1/me']['get']['responses'][200]['content']['application/json'];

/** The signed-in user, or null when there is no (valid) session. */
export async function loadMe(): Promise<Me | null> {
  try {
    return await data(api.GET('/api/v1/me'));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

export type SignInMethods = paths['/api/v1/auth/methods']['get']['responses'][200]['content']['application/json'];

/** How people sign in here; when the server cannot say, the password form (the server answers for itself when it is used). */
export async function loadSignInMethods(): Promise<SignInMethods> {
  try {
    return await data(api.GET('/api/v1/auth/methods'));
  } catch {
    return { password: true, oidc: null };
  }
}

export async function signIn(email: string, password: string): Promise<Me> {
  await data(api.POST('/api/v1/auth/login', { body: { email, password } }));
  const me = await loadMe();
  if (!me) throw new Error(t('net.noSession'));
  return me;
}

export async function signOut(): Promise<void> {
  await data(api.POST('/api/v1/auth/logout'));
}
