import { Link } from '../components/Link';

export function NotFound() {
  return (
    <section class="page">
      <h1>Not found</h1>
      <p>
        There is nothing at this address. <Link href="/">Back to the workspaces</Link>
      </p>
    </section>
  );
}
