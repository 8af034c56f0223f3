export default function Products() {
  return (
    <main>
      <h1>Products</h1>
      <ul>
        <li>Hammer</li>
        <li>Wrench</li>
        <li>Pliers</li>
      </ul>
    </main>
  );
}
