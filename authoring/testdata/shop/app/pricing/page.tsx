const plans = [
  { name: "Starter", price: "$9" },
  { name: "Pro", price: "$29" },
  { name: "Team", price: "$99" },
];

export default function Pricing() {
  return (
    <main>
      <h1>Pricing</h1>
      <section className="plans">
        {plans.map((p) => (
          <div key={p.name} data-testid="plan-card" className="card">
            <h2>{p.name}</h2>
            <p>{p.price} a month</p>
          </div>
        ))}
      </section>
    </main>
  );
}
