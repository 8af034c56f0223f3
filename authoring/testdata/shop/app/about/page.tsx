export default function About() {
  return (
    <main>
      <h1>About Acme</h1>
      <p>We have made tools since 1952.</p>
    </main>
  );
}
