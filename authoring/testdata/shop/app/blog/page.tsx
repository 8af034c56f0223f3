export default function Blog() {
  return (
    <main>
      <h1>Workshop notes</h1>
      <p>Stories from the bench.</p>
    </main>
  );
}
