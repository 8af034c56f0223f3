export default function Home() {
  return (
    <main>
      <h1>Tools that last</h1>
      <p>Hand tools for every workshop.</p>
    </main>
  );
}
